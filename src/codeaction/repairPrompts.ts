/** The reply by which the model says that no program can do the job within the call cap (seed 002). */
export const CANNOT_FINISH = "CANNOT_FINISH_WITHIN_CALL_CAP";

/** After a program crashed: the tail of its traceback, and a request for the whole corrected program. */
export function crashRepairPrompt(errorTail: string): string {
  return `The program failed:\n\n${errorTail}\n\nFix it and reply with the whole corrected program in a single \`\`\`python block. It must still do the whole job.`;
}

/** After a program ran past exec_timeout (its value is no secret: only the call cap's is). */
export function timeoutRepairPrompt(seconds: number): string {
  return `The program did not finish within the time limit of ${seconds} s and was stopped; its output was discarded. Reply with a faster program that does the whole job, in a single \`\`\`python block.`;
}

/** After a program finished without an answer. */
export const EMPTY_REPAIR_PROMPT =
  "The program finished without printing anything or calling final_answer(value), so there is no answer. Reply with the whole corrected program in a single ```python block.";

/**
 * After a program reached the call cap: the whole job again with fewer calls, never a part of it (seed 002), or
 * the reply CANNOT_FINISH_WITHIN_CALL_CAP. The cap's value is not given.
 */
export const BUDGET_REPAIR_PROMPT = `The program reached the cap on function calls per program before it finished, so its output was discarded: it was incomplete. Write a program that does the whole job with fewer calls: use a function that returns many records at once, and never fetch the same data twice. Never work on only part of the data. Reply with the whole program in a single \`\`\`python block, or, if the job cannot be done within the cap, reply with exactly ${CANNOT_FINISH}.`;

import type { RunRecorder } from "../RunRecorder.js";
import type { RunJournal } from "./RunJournal.js";
import { ToolJournal } from "./ToolJournal.js";

const NOTHING_KEPT: ReadonlyMap<string, string> = new Map();

/**
 * The tool journal of a recorded run: each call noted in the run store before it runs, its outcome kept when it
 * ends, both on disk before the run goes on (`RunRecorder.toolStarted`, `toolEnded`). A resumed run (`resume`)
 * reads back its recorded outcomes and notes; a tool whose work is journaled inside (a nested tactic) runs again,
 * and a replayed call's `ctx.sample` requests are answered again from the record (counted, not paid again).
 */
export function recordedToolJournal(recorder: RunRecorder, resume: RunJournal | undefined, rerunUnknown: ((call: { key: string; agent: string; name: string }) => boolean) | undefined): ToolJournal {
  return new ToolJournal({
    results: {
      toolResultsOf: () => resume?.kept ?? NOTHING_KEPT,
      keepToolStart: (key, note) => recorder.toolStarted({ key, ...note }),
      keepToolResult: (key, outcome, ended) => recorder.toolEnded(key, outcome, ended),
    },
    kept: resume?.kept ?? NOTHING_KEPT,
    runInsideAgain: true,
    keepSamples: true,
    ...(rerunUnknown ? { rerunUnknown } : {}),
  });
}

/** A call waiting for approval: the tool and the arguments it would run with, and who asks. */
export interface ApprovalRequest {
  tool: string;
  arguments: Record<string, unknown>;
  /** The agent whose call it is (the tool loop's agent, or the one whose program makes the call). */
  agent?: string;
  /** Aborted when the run stops while the question waits (Ctrl-C, a limit): the call is then refused. */
  signal?: AbortSignal;
}

/**
 * Decides whether a call to a tool that needs approval (declared `approval: required`, or listed in a tactic's
 * `require_approval`) may run, in the tool loop and from programs alike. Resolve `true` to run it; `false` refuses
 * it: the tool loop's model reads the refusal, a program gets `ToolApprovalDenied`.
 */
export type ApprovalPolicy = (request: ApprovalRequest) => Promise<boolean>;

/** `--approve all`. */
export const approveAll: ApprovalPolicy = async () => true;

/** `--approve none`, and the default when nobody can be asked. */
export const approveNone: ApprovalPolicy = async () => false;

/**
 * `policy`, with `notice` told once, at the first call it refuses: a run where nobody can be asked (a pipe, a
 * batch, a worker) says so once on stderr rather than refusing in silence.
 */
export function noticeFirstRefusal(policy: ApprovalPolicy, notice: (request: ApprovalRequest) => void): ApprovalPolicy {
  let told = false;
  return async (request) => {
    const allowed = await policy(request);
    if (!allowed && !told) {
      told = true;
      notice(request);
    }
    return allowed;
  };
}

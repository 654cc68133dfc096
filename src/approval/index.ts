export { approveAll, approveNone, noticeFirstRefusal, type ApprovalPolicy, type ApprovalRequest } from "./ApprovalPolicy.js";
export { askOnTerminal } from "./askOnTerminal.js";
export { guardToolCall, type GuardedCall } from "./guardToolCall.js";

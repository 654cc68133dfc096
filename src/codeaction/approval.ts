// Approval is one policy for the tool loop and for programs: it lives in approval/, below both; kept here for existing imports.
export { approveAll, approveNone, askOnTerminal, type ApprovalPolicy, type ApprovalRequest } from "../approval/index.js";

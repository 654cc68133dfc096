/**
 * The bridge protocol between the host and kernel.py: one JSON object per line, host -> kernel on the kernel's
 * fd 3, kernel -> host on its fd 4. Pipes only (never a socket, never polled files), so the sandbox can stay
 * without a network and nothing the code prints can be mistaken for a message. Ids pair requests with answers:
 * run ids are the host's, call ids the kernel's.
 */
import type { SandboxLimits } from "./IsolationOptions.js";

/** The error a host function answers with; kernel.py raises the Python class named `type`. */
export interface BridgeErrorPayload {
  type: string;
  message: string;
}

/** Messages the host sends. `init` is the first line, once. */
export type HostMessage =
  | { type: "init"; prelude: string; limits: SandboxLimits; maxOutputChars: number; truncationIndicator: string; maxMessageBytes: number; cwd?: string; seccomp?: string }
  | { type: "run"; id: number; code: string; timeout: number }
  | { type: "reset"; id: number }
  | { type: "reply"; id: number; ok: true; value: unknown }
  | { type: "reply"; id: number; ok: false; error: BridgeErrorPayload };

/** Messages the kernel sends. */
export type KernelMessage =
  | { type: "ready"; pid: number; error?: undefined }
  | { type: "ready"; error: string }
  | { type: "result"; id: number; output: string; error: BridgeErrorPayload | null; timedOut: boolean; outputCut?: boolean }
  | { type: "call"; id: number; name: string; args: unknown };

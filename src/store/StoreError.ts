import { LllmError } from "../errors.js";

/**
 * The run store's file cannot be used as it is: damaged, unreadable, or not writable where it must be. Exit code 1:
 * nothing in the user's tactic or flags is wrong; the message names the file and how to recover it.
 */
export class StoreError extends LllmError {}

/** Wraps an error of the caller's `onText` so that it passes the translation of the server's errors unchanged. */
export class CallerError extends Error {
  constructor(readonly original: unknown) {
    super("onText failed");
  }
}

/**
 * Give a streamed answer's text to the caller's `onText`, the answer being under way (`markDelivered`: a retry would
 * repeat what the caller has seen). What `onText` throws is the caller's, not the server's: it comes out as a
 * `CallerError`, for the stream reader to throw its `original` past the translation of the server's errors.
 */
export function passText(text: string, attempt: { markDelivered: () => void }, onText: (delta: string) => void): void {
  if (text === "") return;
  attempt.markDelivered();
  try {
    onText(text);
  } catch (error) {
    throw new CallerError(error);
  }
}

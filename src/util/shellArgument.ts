/** A command-line argument as a shell reads it back: as it is when it holds nothing a shell reads otherwise, else in single quotes. */
export function shellArgument(text: string): string {
  return /^[A-Za-z0-9._/:=@-]+$/.test(text) ? text : `'${text.replace(/'/g, `'\\''`)}'`;
}

/** A `javascript` check: the answer fits in a text message (else the reason, which the report shows). */
export default function answerIsShort(result: { output: unknown }): boolean | string {
  const text = String(result.output ?? "");
  return text.length <= 280 || `the answer is ${text.length} characters long; at most 280 fit in a text message`;
}

/** A problem found while parsing a YAML (or JSON) text, at an offset in the text. */
export interface YamlProblem {
  offset: number;
  message: string;
  /** The yaml library's error code, or one of the checks made here (`DUPLICATE_KEY`, `ALIAS_CYCLE`, …). */
  code: string;
}

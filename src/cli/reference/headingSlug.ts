/**
 * The anchor a code host gives a Markdown heading (GitHub's, as github-slugger makes it): the text as it reads
 * (code marks, emphasis and link targets dropped), lower-cased, without punctuation other than `-` and `_`,
 * spaces made `-`. A page's second heading of the same text gets `-1`, the third `-2` (see `headingSlugs`).
 */
export function headingSlug(heading: string): string {
  return headingText(heading)
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, "")
    .replaceAll(" ", "-");
}

/** A heading's text as it reads: `[text](target)` is its text, code marks and emphasis are dropped. */
export function headingText(heading: string): string {
  return heading
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, "$1")
    .replace(/<[^>]+>/g, "")
    .replace(/[`*]/g, "")
    .trim();
}

/** The anchors of a page's headings, in order, numbered as a code host numbers repeated ones. */
export function headingSlugs(headings: readonly string[]): string[] {
  const seen = new Map<string, number>();
  return headings.map((heading) => {
    const slug = headingSlug(heading);
    const count = seen.get(slug);
    seen.set(slug, (count ?? -1) + 1);
    return count === undefined ? slug : `${slug}-${count + 1}`;
  });
}

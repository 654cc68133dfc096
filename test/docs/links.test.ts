import { existsSync, statSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { headingSlug, headingSlugs } from "../../src/cli/reference/headingSlug.js";
import { documentationPages, explicitAnchors, pageHeadings, pageLinks, readPage } from "../helpers/markdown.js";
import { ROOT } from "../helpers/runCli.js";
import { tempTree } from "../helpers/tempTree.js";

/** The anchors a page offers: its headings' (as a code host makes them) and its `<a id>`s. */
function anchorsOf(markdown: string): Set<string> {
  return new Set([...headingSlugs(pageHeadings(markdown)), ...explicitAnchors(markdown)]);
}

/** Every link of the pages under `root` that does not resolve: to a missing file, or to a heading the page lacks. */
function brokenLinks(root: string, pages = documentationPages(root)): string[] {
  const broken: string[] = [];
  for (const page of pages) {
    const markdown = readPage(page, root);
    for (const link of pageLinks(markdown)) {
      if (/^[a-z][a-z0-9+.-]*:/i.test(link.target)) continue; // https:, mailto: …: outside the clone
      const [file, anchor] = link.target.split("#") as [string, string | undefined];
      const target = file === "" ? page : path.posix.normalize(path.posix.join(path.posix.dirname(page), decodeURIComponent(file)));
      const where = `${page}:${link.line}: ${link.target}`;
      if (target.startsWith("..") || !existsSync(path.join(root, target))) {
        broken.push(`${where}: no file ${target}`);
        continue;
      }
      if (anchor === undefined) continue;
      if (!target.endsWith(".md") || statSync(path.join(root, target)).isDirectory()) broken.push(`${where}: an anchor into a file that is not a page`);
      else if (!anchorsOf(readPage(target, root)).has(anchor)) broken.push(`${where}: ${target} has no heading #${anchor}`);
    }
  }
  return broken;
}

/** The pages of docs/ that docs/README.md (the index) does not link to. */
function orphanPages(root: string): string[] {
  const index = "docs/README.md";
  const linked = new Set(pageLinks(readPage(index, root)).map((link) => path.posix.normalize(path.posix.join("docs", link.target.split("#")[0]!))));
  return documentationPages(root).filter((page) => page.startsWith("docs/") && page !== index && !linked.has(page));
}

describe("the documentation's links", () => {
  it("resolve, to the page and to the heading, on every page", () => {
    expect(brokenLinks(ROOT)).toEqual([]);
  });

  it("reach every page of docs/ from the index, and the index from the README", () => {
    expect(orphanPages(ROOT)).toEqual([]);
    expect(pageLinks(readPage("README.md")).map((link) => link.target)).toContain("docs/README.md");
  });

  it("fail on a missing page, a missing heading and a page no index links to", () => {
    const root = tempTree({
      "README.md": "[docs](docs/README.md) [gone](docs/gone.md) [ok](docs/a.md#keys-and---env-file)\n",
      "docs/README.md": "# Index\n\n- [A](a.md): a page\n",
      "docs/a.md": "# A\n\n## Keys and `--env-file`\n\n[up](README.md#index) [nowhere](#no-such-heading) [in code `[x](b.md)`]\n\n```md\n[not a link](c.md)\n```\n",
      "docs/b.md": "# B, whom no index names\n",
    });
    expect(brokenLinks(root)).toEqual(["README.md:1: docs/gone.md: no file docs/gone.md", "docs/a.md:5: #no-such-heading: docs/a.md has no heading #no-such-heading"]);
    expect(orphanPages(root)).toEqual(["docs/b.md"]);
  });

  it("name headings as GitHub does", () => {
    expect(headingSlug("Keys and `--env-file`")).toBe("keys-and---env-file");
    expect(headingSlug("Limits, fallback and approval")).toBe("limits-fallback-and-approval");
    expect(headingSlug("Everyday use: init, keys, doctor, completion")).toBe("everyday-use-init-keys-doctor-completion");
    expect(headingSlug("A tool's context")).toBe("a-tools-context");
    expect(headingSlug("### `config_invalid`".replace(/^#+ /, ""))).toBe("config_invalid");
    expect(headingSlugs(["Usage", "Usage", "Usage"])).toEqual(["usage", "usage-1", "usage-2"]);
  });
});

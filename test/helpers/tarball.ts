import { gzipSync } from "node:zlib";

/** One entry of a hand-made tar archive. */
export interface TarEntry {
  path: string;
  /** A file's bytes (default empty). */
  content?: string | Buffer;
  type?: "file" | "dir" | "symlink" | "link";
  /** For links: where they point. */
  linkpath?: string;
  mode?: number;
  /** The size the header claims (default: the content's), to make an archive that says it unpacks huge. */
  declaredSize?: number;
}

const TYPE_FLAG = { file: "0", link: "1", symlink: "2", dir: "5" } as const;

/**
 * A tar archive (gzipped unless `gzip: false`) written byte by byte, so that tests can make what no archiver
 * would: paths that climb out (`../x`), absolute paths, links, an entry that claims gigabytes.
 */
export function makeTarball(entries: TarEntry[], options: { gzip?: boolean } = {}): Buffer {
  const blocks: Buffer[] = [];
  for (const entry of entries) {
    const type = entry.type ?? "file";
    const content = type === "file" ? Buffer.from(entry.content ?? "") : Buffer.alloc(0);
    const header = Buffer.alloc(512);
    const write = (text: string, offset: number, length: number): void => void header.write(text, offset, Math.min(Buffer.byteLength(text), length), "utf8");
    const octal = (value: number, offset: number, length: number): void => write(value.toString(8).padStart(length - 1, "0") + "\0", offset, length);
    write(entry.path, 0, 100);
    octal(entry.mode ?? (type === "dir" ? 0o755 : 0o644), 100, 8);
    octal(0, 108, 8);
    octal(0, 116, 8);
    octal(entry.declaredSize ?? content.length, 124, 12);
    octal(0, 136, 12);
    header.fill(" ", 148, 156);
    write(TYPE_FLAG[type], 156, 1);
    if (entry.linkpath !== undefined) write(entry.linkpath, 157, 100);
    write("ustar\0", 257, 6);
    write("00", 263, 2);
    let sum = 0;
    for (const byte of header) sum += byte;
    write(sum.toString(8).padStart(6, "0") + "\0 ", 148, 8);
    blocks.push(header, content, Buffer.alloc((512 - (content.length % 512)) % 512));
  }
  blocks.push(Buffer.alloc(1024));
  const tar = Buffer.concat(blocks);
  return options.gzip === false ? tar : gzipSync(tar);
}

/** A package as an npm-style archive: every file under `package/`. */
export function packageTarball(files: Record<string, string>, options: { mode?: Record<string, number> } = {}): Buffer {
  return makeTarball(Object.entries(files).map(([name, content]) => ({ path: `package/${name}`, content, ...(options.mode?.[name] !== undefined ? { mode: options.mode[name] } : {}) })));
}

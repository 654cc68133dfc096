/**
 * The simple commands of a shell text, each as its words: quotes removed, split at `|`, `||`, `&&`, `;`, `&`, `$(`,
 * `<(`, `)` and newlines; a `#` that starts a word comments out the rest of its line. Enough of sh to read the
 * commands a documentation page shows, not to run them: no expansion, no here-documents (their lines read as
 * commands, which is harmless for finding `lllm …` lines).
 */
export function simpleCommands(text: string): string[][] {
  const commands: string[][] = [];
  let words: string[] = [];
  let word: string | undefined;
  const endWord = (): void => {
    if (word !== undefined) words.push(word);
    word = undefined;
  };
  const endCommand = (): void => {
    endWord();
    if (words.length > 0) commands.push(words);
    words = [];
  };
  for (let at = 0; at < text.length; at++) {
    const char = text[at]!;
    const next = text[at + 1];
    if (char === "'" || char === '"') {
      const close = text.indexOf(char, at + 1);
      const end = close === -1 ? text.length : close;
      word = (word ?? "") + text.slice(at + 1, end);
      at = end;
    } else if (char === "\\" && next !== undefined) {
      if (next !== "\n") word = (word ?? "") + next;
      at++;
    } else if (char === "#" && word === undefined) {
      const newline = text.indexOf("\n", at);
      at = (newline === -1 ? text.length : newline) - 1;
    } else if ((char === "$" || char === "<") && next === "(") {
      endCommand();
      at++;
    } else if ("|&;()\n".includes(char)) endCommand();
    else if (char === " " || char === "\t") endWord();
    else word = (word ?? "") + char;
  }
  endCommand();
  return commands;
}

/** The `lllm …` commands of a shell text, each as the words after `lllm` (after `npx lllm`, `$ lllm` and `VAR=value lllm` too). */
export function lllmCommands(text: string): string[][] {
  const found: string[][] = [];
  for (const words of simpleCommands(text)) {
    let at = 0;
    while (at < words.length && (words[at] === "$" || words[at] === "npx" || /^[A-Za-z_][A-Za-z0-9_]*=/.test(words[at]!))) at++;
    if (words[at] === "lllm") found.push(words.slice(at + 1));
  }
  return found;
}

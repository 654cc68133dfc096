export { Prompt, type PromptOptions, type PromptParser, type ParserContext } from "./Prompt.js";
export { ParseError, isParseError } from "./ParseError.js";
export { bindTools, type ToolResolver } from "./bindTools.js";
export { formatTemplate, templatePlaceholders } from "./formatTemplate.js";

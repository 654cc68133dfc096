import { displayPath, loadProjectSettings, type ProjectSettings } from "../config/index.js";
import { warn } from "./output.js";

/**
 * The project settings for a command that reads and runs nothing from the folder it is started in (`lllm logs`,
 * `lllm doctor`): a settings file that is code (`lllm.config.mjs`) is not imported, since a clone of someone
 * else's repository may hold one, and the user is told what that leaves out.
 */
export async function settingsWithoutCode(command: string): Promise<ProjectSettings> {
  const { settings, file, notRun } = await loadProjectSettings(process.cwd(), { runCode: false });
  if (notRun && file !== undefined) {
    warn(`${displayPath(file)} is code, which \`lllm ${command}\` does not run: a \`home:\` set there is not used here (set LLLM_HOME instead, or keep the settings in a data file such as .lllmrc.yaml)`);
  }
  return settings;
}

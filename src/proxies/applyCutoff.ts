import type { ParamDefinition } from "./ProxyDefinition.js";
import { ProxyCallError } from "./proxyError.js";

const DAY = /^\d{4}-\d{2}-\d{2}/;
const RELATIVE = /^today (\d+)-([dmy])$/;
const DAY_MS = 86_400_000;

/**
 * Make the date parameters of a call end at the cutoff date (see `CutoffMode`): `end` parameters default to it and
 * are clamped at it, `clamp` parameters are only clamped, `range` values are windows moved to end by it. A value
 * keeps its shape: `2025-03-01T00:00:00Z` becomes `<cutoff>T00:00:00Z`. Dates are compared as `YYYY-MM-DD` text,
 * which orders like the dates themselves. Returns new params; without a cutoff date they are returned as they are.
 */
export function applyCutoff(params: readonly ParamDefinition[], values: Record<string, unknown>, cutoffDate: string | undefined, label: string): Record<string, unknown> {
  if (cutoffDate === undefined) return values;
  const result = { ...values };
  for (const param of params) {
    if (!param.cutoff) continue;
    const value = result[param.name];
    const absent = value === undefined || value === null || value === "";
    if (param.cutoff === "range") {
      result[param.name] = clampRange(absent ? undefined : value, cutoffDate, `\`${param.name}\` of ${label}`);
      continue;
    }
    if (absent) {
      if (param.cutoff === "end") result[param.name] = cutoffDate;
      continue;
    }
    if (typeof value !== "string" || !DAY.test(value)) {
      throw new ProxyCallError("proxy_param_invalid", `\`${param.name}\` of ${label} must be a date written YYYY-MM-DD (got ${JSON.stringify(value)})`);
    }
    if (value.slice(0, 10) > cutoffDate) result[param.name] = cutoffDate + value.slice(10);
  }
  return result;
}

/** A `START END` window ending no later than the cutoff; relative windows are counted back from the cutoff. */
function clampRange(value: unknown, cutoffDate: string, what: string): string {
  if (value === undefined) return `${shift(cutoffDate, 1, "y")} ${cutoffDate}`;
  const text = String(value).trim();
  if (text === "all") return `2004-01-01 ${cutoffDate}`;
  const relative = RELATIVE.exec(text);
  if (relative) return `${shift(cutoffDate, Number(relative[1]), relative[2] as "d" | "m" | "y")} ${cutoffDate}`;
  const [start, end, extra] = text.split(/\s+/);
  if (!start || !end || extra !== undefined || !DAY.test(start) || !DAY.test(end)) {
    throw new ProxyCallError("proxy_param_invalid", `${what} must be "YYYY-MM-DD YYYY-MM-DD", "today 12-m" style or "all" (got ${JSON.stringify(value)})`);
  }
  if (end.slice(0, 10) <= cutoffDate) return text;
  // Keep the window's length, as LLLM does: the agent asked for that much data, ending too late.
  const length = Date.parse(end.slice(0, 10)) - Date.parse(start.slice(0, 10));
  return `${new Date(Date.parse(cutoffDate) - length).toISOString().slice(0, 10)} ${cutoffDate}`;
}

function shift(day: string, amount: number, unit: "d" | "m" | "y"): string {
  const date = new Date(`${day}T00:00:00Z`);
  if (unit === "d") return new Date(date.getTime() - amount * DAY_MS).toISOString().slice(0, 10);
  if (unit === "m") date.setUTCMonth(date.getUTCMonth() - amount);
  else date.setUTCFullYear(date.getUTCFullYear() - amount);
  return date.toISOString().slice(0, 10);
}

/**
 * With a cutoff date, drop the items of a list response whose `field` holds a later date (the seed's `dt_cutoff`):
 * statements and news have no date parameter to clamp, so their future rows are removed here. Other responses,
 * and items without a date in that field, are returned as they are.
 */
export function filterByCutoff(response: unknown, field: string | undefined, cutoffDate: string | undefined): unknown {
  if (field === undefined || cutoffDate === undefined || !Array.isArray(response)) return response;
  return response.filter((item: unknown) => {
    if (item === null || typeof item !== "object") return true;
    const value = (item as Record<string, unknown>)[field];
    return !(typeof value === "string" && DAY.test(value) && value.slice(0, 10) > cutoffDate);
  });
}

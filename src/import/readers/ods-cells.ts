import type { SaxesTagNS } from "saxes";
import { numberProblem } from "./xlsx-cells.js";

/** The OpenDocument namespaces the reader looks at, by the names it uses. */
export const NS = {
  office: "urn:oasis:names:tc:opendocument:xmlns:office:1.0",
  table: "urn:oasis:names:tc:opendocument:xmlns:table:1.0",
  text: "urn:oasis:names:tc:opendocument:xmlns:text:1.0",
  style: "urn:oasis:names:tc:opendocument:xmlns:style:1.0",
  calcext: "urn:org:documentfoundation:names:experimental:calc:xmlns:calcext:1.0",
} as const;

/** An attribute's value by its namespace and local name, or undefined. */
export function attr(node: SaxesTagNS, uri: string, local: string): string | undefined {
  for (const key in node.attributes) {
    const attribute = node.attributes[key]!;
    if (attribute.local === local && attribute.uri === uri) return attribute.value;
  }
  return undefined;
}

export function is(node: { uri: string; local: string }, uri: string, local: string): boolean {
  return node.local === local && node.uri === uri;
}

/** A repeat count (`number-columns-repeated`, `number-rows-repeated`): 1 when absent or bad. */
export function repeatOf(node: SaxesTagNS, local: string): number {
  const value = Number(attr(node, NS.table, local));
  return Number.isSafeInteger(value) && value > 1 ? value : 1;
}

/** What a cell's attributes say of it; its paragraphs come after. */
export interface OdsCellStart {
  type: string | undefined;
  /** Its value as text when the attributes hold it (numbers, dates, booleans, string-value). */
  value?: string;
  formula?: string;
  error: boolean;
  repeat: number;
}

/** A cell's value from its attributes: OpenDocument keeps the typed value beside the shown text. */
export function cellStart(node: SaxesTagNS): OdsCellStart {
  const type = attr(node, NS.office, "value-type");
  const formula = attr(node, NS.table, "formula");
  const error = attr(node, NS.calcext, "value-type") === "error";
  const repeat = repeatOf(node, "number-columns-repeated");
  const value =
    type === "float" || type === "percentage" || type === "currency"
      ? attr(node, NS.office, "value")
      : type === "date"
        ? attr(node, NS.office, "date-value")
        : type === "time"
          ? attr(node, NS.office, "time-value")
          : type === "boolean"
            ? attr(node, NS.office, "boolean-value")
            : attr(node, NS.office, "string-value");
  return { type, value, formula, error, repeat };
}

/**
 * A cell as text and, when its value must not be taken (a formula, a date, an error), why: the
 * same words as an .xlsx cell's (xlsx-cells.ts). `shown` is its paragraphs' text.
 */
export function odsCellText(cell: OdsCellStart, shown: string): { text: string; problem?: string } {
  const text = typedText(cell, shown);
  if (cell.formula !== undefined) {
    const formula = cell.formula.replace(/^[a-z]+:/, "");
    return {
      text: text.text,
      problem: `holds a formula (${formula.startsWith("=") ? "" : "="}${formula}); formulas are not read: paste the value instead (Paste Special > Values)`,
    };
  }
  if (cell.error) return { text: shown, problem: `holds the error ${shown}` };
  return text;
}

function typedText(cell: OdsCellStart, shown: string): { text: string; problem?: string } {
  switch (cell.type) {
    case "float":
    case "percentage":
    case "currency": {
      const value = Number(cell.value);
      if (cell.value === undefined || cell.value.trim() === "") return { text: shown };
      return { text: String(value), problem: numberProblem(value) };
    }
    case "date": {
      const text = cell.value ?? shown;
      return {
        text,
        problem: `holds a date (${text}); dates are not read as order values: format the cell as text and type the value`,
      };
    }
    case "time": {
      const text = cell.value ?? shown;
      return {
        text,
        problem: `holds a time (${text}); times are not read as order values: format the cell as text and type the value`,
      };
    }
    case "boolean":
      return { text: cell.value === "true" ? "TRUE" : cell.value === "false" ? "FALSE" : shown };
    default:
      return { text: cell.value ?? shown };
  }
}

// Readers of the CI reports as CI systems read them: JUnit through an XML parser, SARIF against the
// 2.1.0 schema.
import AjvModule from "ajv-draft-04";
import { XMLParser, XMLValidator } from "fast-xml-parser";
import { readFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { expect } from "vitest";

const require = createRequire(import.meta.url);
const schemaFile = require.resolve("@microsoft/jest-sarif/lib/schemas/sarif-2.1.0-rtm.5.json");

// htmlEntities: decode numeric character references (&#10; in an attribute) as an XML reader does.
const parser = new XMLParser({ ignoreAttributes: false, attributeNamePrefix: "", htmlEntities: true, isArray: (name) => name === "testcase" || name === "property" });

export interface JUnitCase {
  classname: string;
  name: string;
  failure?: { "#text": string; message: string; type: string };
  skipped?: { message: string };
  "system-out"?: string;
}

export function parseJUnit(xml: string) {
  expect(XMLValidator.validate(xml)).toBe(true);
  const suites = (parser.parse(xml) as { testsuites: Record<string, unknown> & { testsuite: Record<string, string> & { testcase: JUnitCase[] } } }).testsuites;
  return { suites, cases: new Map(suites.testsuite.testcase.map((testcase) => [testcase.name, testcase])) };
}

/** A validator of SARIF 2.1.0 logs, with the errors of its last call. */
export async function sarifValidator(): Promise<{ validate: (log: unknown) => boolean; errors: () => unknown }> {
  // A CommonJS module with its class on `default`: NodeNext types see the namespace.
  const Ajv = AjvModule as unknown as typeof AjvModule.default;
  // unicodeRegExp off: the schema's language pattern is not a valid regular expression under the u flag.
  const ajv = new Ajv({ allErrors: true, strict: false, unicodeRegExp: false });
  const validate = ajv.compile(JSON.parse(await readFile(schemaFile, "utf8")) as object);
  return { validate: (log) => validate(log) as boolean, errors: () => validate.errors };
}

/**
 * Gate 1 of the chapter: the schema. A ToolSpec tells the model what shape of input a tool expects.
 *
 * Promises: every spec built with `schema()` is a closed JSON object schema (`additionalProperties:
 * false`), which the provider receives as `input_schema`.
 * Does not promise: that any input is checked against it. The schema informs the model and the
 * provider; nothing here validates at run time. That is gate 2, `stringField` in fields.ts.
 */

export type JsonSchemaProperty = { type: "string" | "number" | "boolean" | "object" | "array"; description?: string };

export interface ObjectSchema {
  type: "object";
  properties: Record<string, JsonSchemaProperty>;
  required: string[];
  additionalProperties: false;
}

export interface ToolSpec {
  name: string;
  description: string;
  inputSchema: ObjectSchema;
}

export function schema(required: string[], properties: Record<string, JsonSchemaProperty>): ObjectSchema {
  return { type: "object", properties, required, additionalProperties: false };
}

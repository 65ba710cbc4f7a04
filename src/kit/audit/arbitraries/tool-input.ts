/**
 * Tool inputs by class, enumerated rather than hoped for: every required field is drawn from each way
 * a value can fail to be a string (missing, each JSON type that is not a string, a boxed or an object
 * string, an array holding a string), or is a string; the fields ride in a plain object, a
 * null-prototype object, an array that carries them as properties, or no object at all.
 *
 * Promises: `isValidInput` is the chapter's rule for the generated value (a record, not an array, whose
 * required fields are all `string`s); every string a field or a boxed string holds is the harmless
 * value the caller gave for that field, so a generated input never names a real file or runs a real
 * command. Does not promise: coverage of exotic objects (proxies, getters); `fc.anything` does that.
 */
import fc from "fast-check";

export const FIELD_CLASSES = ["missing", "null", "number", "boolean", "object", "array", "boxedString", "objectString", "string"] as const;
export type FieldClass = (typeof FIELD_CLASSES)[number];

export const CONTAINER_CLASSES = ["plain", "nullPrototype", "array", "primitive"] as const;
export type ContainerClass = (typeof CONTAINER_CLASSES)[number];

export interface ToolInputConstraints {
  /** Each required field, with the harmless string it holds when it is a string. */
  fields: Readonly<Record<string, string>>;
}

export interface ToolInputCase {
  container: ContainerClass;
  classes: Readonly<Record<string, FieldClass>>;
  input: unknown;
}

/** A value of `kind` that, read carelessly (`String(v)`, `` `${v}` ``, `v[0]`), may become `text`. */
export function fieldValue(kind: FieldClass, text: string): unknown {
  switch (kind) {
    case "missing":
      return undefined;
    case "null":
      return null;
    case "number":
      return 0;
    case "boolean":
      return true;
    case "object":
      return {};
    case "array":
      return [text];
    case "boxedString":
      return new String(text);
    case "objectString":
      // A counterexample writes the function as what it returns, so that pasted, it returns the same.
      return { toString: Object.assign(() => text, { [fc.toStringMethod]: () => `() => ${JSON.stringify(text)}` }) };
    case "string":
      return text;
  }
}

function carry(container: ContainerClass, fields: Record<string, unknown>): unknown {
  switch (container) {
    case "plain":
      return fields;
    case "nullPrototype":
      return Object.assign(Object.create(null) as object, fields);
    case "array":
      return Object.assign([], fields);
    case "primitive":
      return Object.values(fields)[0] ?? null;
  }
}

const NON_STRING_FIELDS = FIELD_CLASSES.filter((kind) => kind !== "string");
const NON_PLAIN_CONTAINERS = CONTAINER_CLASSES.filter((kind) => kind !== "plain");

/**
 * Mostly one slip at a time, so that the slip alone decides the answer: one field of one class in a
 * plain object with every other field a string, or every field a string in another container; then
 * valid input, and every field and the container free.
 */
function classes(count: number): fc.Arbitrary<{ container: ContainerClass; kinds: FieldClass[] }> {
  const strings = (): FieldClass[] => Array.from({ length: count }, () => "string" as const);
  const fieldSlip = fc
    .record({ index: fc.nat({ max: Math.max(0, count - 1) }), kind: fc.constantFrom(...NON_STRING_FIELDS) })
    .map(({ index, kind }) => ({ container: "plain" as const, kinds: strings().map((string, at) => (at === index ? kind : string)) }));
  const containerSlip = fc.constantFrom(...NON_PLAIN_CONTAINERS).map((container) => ({ container, kinds: strings() }));
  const valid = fc.constantFrom<ContainerClass>("plain", "nullPrototype").map((container) => ({ container, kinds: strings() }));
  const free = fc.record({
    container: fc.constantFrom(...CONTAINER_CLASSES),
    kinds: fc.array(fc.constantFrom(...FIELD_CLASSES), { minLength: count, maxLength: count }),
  });
  return fc.oneof({ weight: 3, arbitrary: fieldSlip }, { weight: 2, arbitrary: containerSlip }, { weight: 1, arbitrary: valid }, { weight: 1, arbitrary: free });
}

export function toolInput({ fields }: ToolInputConstraints): fc.Arbitrary<ToolInputCase> {
  const names = Object.keys(fields);
  return classes(names.length).map(({ container, kinds }) => {
    const byField: Record<string, FieldClass> = {};
    const values: Record<string, unknown> = {};
    names.forEach((name, index) => {
      const kind = kinds[index] ?? "string";
      byField[name] = kind;
      if (kind !== "missing") values[name] = fieldValue(kind, fields[name] ?? "");
    });
    return { container, classes: byField, input: carry(container, values) };
  });
}

/** The chapter's gate 2: a record (not null, not an array) whose required fields are own strings. */
export function isValidInput(input: unknown, required: readonly string[]): boolean {
  if (typeof input !== "object" || input === null || Array.isArray(input)) return false;
  return required.every((field) => Object.hasOwn(input, field) && typeof (input as Record<string, unknown>)[field] === "string");
}

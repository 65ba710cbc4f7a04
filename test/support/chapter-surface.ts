// The chapter's tools read and write and run bash: the properties of every other operation of the
// catalogue have nothing to attack in them, and are not applicable to any target that offers only those;
// nor are the protected entries' properties to a target audited without --protect.
import { OPERATION_PROPERTIES } from "../../src/kit/audit/properties/operations.js";
import { PROTECTED_PROPERTIES } from "../../src/kit/audit/properties/protected.js";
import { containmentId } from "../../src/kit/operations/catalog.js";

const CHAPTER_OPERATIONS = [containmentId("read"), containmentId("write")];

/** Whether `id` is the property of an operation the chapter's tools do not do, or of protected entries, which no audit without --protect has. */
export const notTheChapters = (id: string): boolean =>
  (OPERATION_PROPERTIES.some((property) => property.id === id) && !CHAPTER_OPERATIONS.includes(id)) || id === containmentId("extract") || PROTECTED_PROPERTIES.some((property) => property.id === id);

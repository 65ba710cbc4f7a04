/**
 * Parts every generated case has and a counterexample may do without: the attacks every tree opens
 * with, the twins and probes inside them.
 *
 * Promises: `droppable(arbitrary)` always generates one of `arbitrary`'s values (never `undefined`), and
 * shrinks it first to `undefined`, then as `arbitrary` shrinks it; `allOf` generates every part, and
 * shrinks by leaving out any of them. So a class of attack is met in every case, by construction,
 * while shrinking still takes away what a failure does not need.
 */
import fc from "fast-check";

class Droppable<T> extends fc.Arbitrary<T | undefined> {
  constructor(private readonly arbitrary: fc.Arbitrary<T>) {
    super();
  }

  generate(random: fc.Random, biasFactor: number | undefined): fc.Value<T | undefined> {
    const generated = this.arbitrary.generate(random, biasFactor);
    return new fc.Value(generated.value_, generated.context);
  }

  canShrinkWithoutContext(value: unknown): value is T | undefined {
    return value === undefined || this.arbitrary.canShrinkWithoutContext(value);
  }

  shrink(value: T | undefined, context: unknown): fc.Stream<fc.Value<T | undefined>> {
    if (value === undefined) return fc.Stream.nil();
    const dropped = fc.Stream.of(new fc.Value<T | undefined>(undefined, undefined));
    return dropped.join(this.arbitrary.shrink(value, context) as fc.Stream<fc.Value<T | undefined>>);
  }
}

/** `arbitrary`'s values, always; shrunk first to `undefined`. */
export function droppable<T>(arbitrary: fc.Arbitrary<T>): fc.Arbitrary<T | undefined> {
  return new Droppable(arbitrary);
}

/** One value of each arbitrary, in order; shrinking leaves out any of them. */
export function allOf<T>(arbitraries: readonly fc.Arbitrary<T>[]): fc.Arbitrary<T[]> {
  if (arbitraries.length === 0) return fc.constant([]);
  return fc.tuple(...arbitraries.map(droppable)).map((parts) => parts.filter((part): part is T => part !== undefined));
}

/** Every item, in order; shrinking leaves out any of them. */
export function allOfItems<T>(items: readonly T[]): fc.Arbitrary<T[]> {
  return allOf(items.map((item) => fc.constant(item)));
}

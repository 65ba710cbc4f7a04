/**
 * Parts every generated case has and a counterexample may do without: the attacks every tree opens
 * with, the twins and probes inside them.
 *
 * Promises: `droppable(arbitrary)` always generates one of `arbitrary`'s values (never `undefined`), and
 * shrinks it first to `undefined`, then as `arbitrary` shrinks it. `allOf` generates every part, and
 * shrinks by leaving parts out wholesale before it shrinks inside any: all of them, then each half,
 * each quarter, …, then each part alone (a failure needs few of them, and each try costs a whole
 * case), and only then each part as its own arbitrary shrinks it. So a class of attack is met in every
 * case, by construction, while shrinking takes away first what a failure does not need.
 * `stableChain` is `fc.chain` whose shrinks of the source draw the chained value again from the
 * random state it was first drawn from, so that leaving out a part of the source the chained value
 * does not depend on leaves that value as it was (fast-check's own chain draws it from another state,
 * so that every shrink of the source changed the probes a failure needed, and failed).
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

/** The parts an `allOf` value holds: which arbitrary drew each, and its value as drawn. */
type Parts<T> = readonly { index: number; part: fc.Value<T> }[];

/** Which parts to leave out, wholesale: all, then halves, quarters, … down to each one alone. */
function chunksToDrop(count: number): [number, number][] {
  const chunks = new Map<string, [number, number]>([[`0-${count}`, [0, count]]]);
  for (let size = count; size > 1; ) {
    size = Math.ceil(size / 2);
    for (let start = 0; start < count; start += size) chunks.set(`${start}-${Math.min(count, start + size)}`, [start, Math.min(count, start + size)]);
  }
  return [...chunks.values()];
}

class AllOf<T> extends fc.Arbitrary<T[]> {
  constructor(private readonly arbitraries: readonly fc.Arbitrary<T>[]) {
    super();
  }

  generate(random: fc.Random, biasFactor: number | undefined): fc.Value<T[]> {
    return this.made(this.arbitraries.map((arbitrary, index) => ({ index, part: arbitrary.generate(random, biasFactor) })));
  }

  canShrinkWithoutContext(value: unknown): value is T[] {
    return false;
  }

  shrink(_value: T[], context: unknown): fc.Stream<fc.Value<T[]>> {
    const parts = context as Parts<T> | undefined;
    if (parts === undefined || parts.length === 0) return fc.Stream.nil();
    const without = fc.Stream.of(...chunksToDrop(parts.length)).map(([start, end]) => this.made([...parts.slice(0, start), ...parts.slice(end)]));
    const inside = fc.Stream.of(...parts.keys()).flatMap((at) => {
      const { index, part } = parts[at] as Parts<T>[number];
      return (this.arbitraries[index] as fc.Arbitrary<T>).shrink(part.value_, part.context).map((shrunk) => this.made(parts.map((kept, other) => (other === at ? { index, part: shrunk } : kept))));
    });
    return without.join(inside);
  }

  private made(parts: Parts<T>): fc.Value<T[]> {
    return new fc.Value(
      parts.map(({ part }) => part.value_),
      parts,
    );
  }
}

/** One value of each arbitrary, in order; shrinking leaves out parts wholesale (all, halves, …, each), then shrinks inside them. */
export function allOf<T>(arbitraries: readonly fc.Arbitrary<T>[]): fc.Arbitrary<T[]> {
  return new AllOf(arbitraries);
}

/** Every item, in order; shrinking leaves out any of them. */
export function allOfItems<T>(items: readonly T[]): fc.Arbitrary<T[]> {
  return allOf(items.map((item) => fc.constant(item)));
}

interface ChainContext<S, T> {
  source: fc.Value<S>;
  /** The random state the chained value was first drawn from, drawn from again after a shrink of the source. */
  drawnFrom: fc.Random;
  chained: fc.Arbitrary<T>;
  chainedContext: unknown;
  biasFactor: number | undefined;
  /** A shrink of the chained value was kept: shrinking the source again would draw it anew, and undo it. */
  chainedShrunk: boolean;
}

class StableChain<S, T> extends fc.Arbitrary<T> {
  constructor(
    private readonly source: fc.Arbitrary<S>,
    private readonly chainer: (source: S) => fc.Arbitrary<T>,
  ) {
    super();
  }

  generate(random: fc.Random, biasFactor: number | undefined): fc.Value<T> {
    const source = this.source.generate(random, biasFactor);
    return this.drawn(source, random.clone(), random, biasFactor);
  }

  canShrinkWithoutContext(value: unknown): value is T {
    return false;
  }

  shrink(value: T, context: unknown): fc.Stream<fc.Value<T>> {
    const known = context as ChainContext<S, T> | undefined;
    if (known === undefined) return fc.Stream.nil();
    const fromSource = known.chainedShrunk ? fc.Stream.nil<fc.Value<T>>() : this.source.shrink(known.source.value_, known.source.context).map((source) => this.drawn(source, known.drawnFrom, known.drawnFrom.clone(), known.biasFactor));
    const fromChained = known.chained.shrink(value, known.chainedContext).map((shrunk) => new fc.Value(shrunk.value_, { ...known, chainedContext: shrunk.context, chainedShrunk: true }));
    return fromSource.join(fromChained);
  }

  private drawn(source: fc.Value<S>, drawnFrom: fc.Random, random: fc.Random, biasFactor: number | undefined): fc.Value<T> {
    const chained = this.chainer(source.value_);
    const value = chained.generate(random, biasFactor);
    const context: ChainContext<S, T> = { source, drawnFrom, chained, chainedContext: value.context, biasFactor, chainedShrunk: false };
    return new fc.Value(value.value_, context);
  }
}

/** `source.chain(chainer)`, but a shrink of the source draws the chained value from the random state it was first drawn from. */
export function stableChain<S, T>(source: fc.Arbitrary<S>, chainer: (source: S) => fc.Arbitrary<T>): fc.Arbitrary<T> {
  return new StableChain(source, chainer);
}

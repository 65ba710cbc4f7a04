/**
 * Splitting one audit across machines: `--shard K/N` runs the K-th of N disjoint blocks of each
 * property's runs, and `merge` puts the shards' reports back together.
 *
 * Promises: fast-check generates a property's runs as one stream fixed by the seed; shard K of N with
 * a budget of R runs takes the runs numbered from `floor((K-1)R/N)` up to `floor(KR/N)` of that
 * stream, so the N shards together run exactly the R runs of the unsharded run (and so its cases),
 * none twice, none lost, and a counterexample's path replays without `--shard`. Under a time budget
 * the number of runs is not known in advance: shard K starts at run `(K-1) * SHARD_STRIDE`, disjoint
 * from the others as long as no shard runs more than `SHARD_STRIDE` runs of one property.
 */
export interface Shard {
  /** 1-based. */
  index: number;
  count: number;
}

export const SHARD_STRIDE = 10_000_000;

export function parseShard(text: string): Shard | undefined {
  const match = /^(\d+)\/(\d+)$/.exec(text);
  if (match === null) return undefined;
  const index = Number(match[1]);
  const count = Number(match[2]);
  return count >= 1 && index >= 1 && index <= count ? { index, count } : undefined;
}

/** The block of a budget of `runs` runs that `shard` takes: its first run and how many. */
export function shardBlock(runs: number, shard: Shard): { firstRun: number; runs: number } {
  const start = Math.floor(((shard.index - 1) * runs) / shard.count);
  const end = Math.floor((shard.index * runs) / shard.count);
  return { firstRun: start, runs: end - start };
}

/** Where shard K starts when the budget is time, not a number of runs. */
export function timedShardStart(shard: Shard): number {
  return (shard.index - 1) * SHARD_STRIDE;
}

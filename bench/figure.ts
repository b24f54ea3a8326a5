// One benchmark figure, printed as a JSON line: a value, its unit, and (when measured against
// a baseline in the same run) the baseline's name and the ratio; a note when the figure needs one.

export interface Figure {
  name: string;
  value: number;
  unit: string;
  baseline?: string;
  ratio?: number;
  /** What the figure is not: e.g. the EventStoreDB test double's figures, for regressions only. */
  note?: string;
}

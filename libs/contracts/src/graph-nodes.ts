// A graph definition's nodes and edges as its checks read them: from the document as it came.
import type { Segments } from './definition-checks';

export type Section = 'sources' | 'transforms' | 'sinks';

export interface Node {
  section: Section;
  index: number;
  id: string;
  item: Record<string, unknown>;
}

/** A node's output as its consumers name it: `paid`, `router.gbp`; `path` is where it is named. */
export interface Edge {
  consumer: Node;
  input: string;
  path: Segments;
}

/** A path under a node: `at(node, 'input')` is `['transforms', 2, 'input']`. */
export const at = (node: Pick<Node, 'section' | 'index'>, ...path: Segments): Segments => [
  node.section,
  node.index,
  ...path,
];

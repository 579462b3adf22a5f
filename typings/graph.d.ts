// CUDA graphs: work captured from a stream, instantiated once and launched many times.
import type { Context, Stream } from './index';

/** Work captured from a stream: `stream.beginCapture()` ... `stream.endCapture()`. */
export declare class Graph {
  private constructor();
  /** How many operations (nodes) the graph holds. */
  readonly nodeCount: number;
  /** A GraphExec of this graph in the current context. */
  instantiate(): GraphExec;
  /** Destroys the graph; GraphExecs made from it stay usable. A second call does nothing. */
  destroy(): void;
  /** `using`: destroys the graph. */
  [Symbol.dispose](): void;
}

/** An instantiated Graph. */
export declare class GraphExec {
  private constructor();
  /** The context it was instantiated in. */
  readonly context: Context;
  /** Enqueues the whole graph on stream (the default stream when omitted). */
  launch(stream?: Stream | null): this;
  /** Uploads it ahead of the first launch. */
  upload(stream?: Stream | null): this;
  /** Later launches run graph's parameters; a LogicError when graph's shape differs. */
  update(graph: Graph): this;
  /** Destroys it; launches already enqueued still run. A second call does nothing. */
  destroy(): void;
  /** `using`: destroys it. */
  [Symbol.dispose](): void;
}

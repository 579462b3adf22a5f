/* graph.h: what graph.c (graphs and their nodes' table), graph_nodes.c (nodes of the driver's
 * own kinds) and graph_exec.c (instantiated graphs) share. */
#ifndef CUDADRV_GRAPH_H
#define CUDADRV_GRAPH_H

#include "driver.h"

typedef struct graph_pins {
  graph_pin *at;
  uint32_t count, room;
  const void *last_context; /* the CTX_PINS pin added last: not added again */
} graph_pins;

/* Retains every pin of from into to (nothing when they are the same); false when out of memory
 * (nothing retained). */
bool pins_append(graph_pins *to, const graph_pins *from);
/* Retains obj with ops into pins; false after throwing (out of memory). */
bool pins_add(napi_env env, graph_pins *pins, void *obj, const graph_pin_ops *ops);
/* Whether a pin names what went with its context (context.detach()). */
bool pins_gone(const graph_pins *pins);
/* Whether a pin names what lives in a context other than ctx. */
bool pins_foreign(const graph_pins *pins, const ctx_rec *ctx);

/* Releases and forgets the pins past the first count (those appended since pins held count). */
void pins_truncate(graph_pins *pins, uint32_t count);
/* Releases and forgets every pin. */
void pins_release(graph_pins *pins);

/* A graph and the bodies of its conditional nodes, which the driver owns with it: a body is
 * usable while its graph lives. Main thread only; freed with the last member. */
typedef struct graph_h graph_h;
typedef struct graph_family {
  int refs;
  bool alive;
  bool lost;    /* the driver freed the graph (graph_lose) */
  graph_h *top; /* the graph the bodies belong to, while alive: it holds their pins */
} graph_family;

struct graph_h {
  handle_base base;
  CUgraph handle;       /* belongs to no context */
  bool body;            /* a conditional node's body: the driver destroys it with its graph */
  graph_family *family; /* NULL until it has conditional nodes, or is a body */
  uint64_t id;          /* unique in the process: a GraphExec names the graph it was made from */
  CUgraphNode *nodes;   /* lib/'s node i is nodes[i] */
  uint32_t count, room;
  graph_pins pins; /* what its nodes use, and its bodies' nodes */
  bool lost;       /* the driver freed it (graph_lose): never passed to the driver again */
};
extern const handle_kind GRAPH_KIND;

typedef struct graph_exec_h {
  handle_base base;
  CUgraphExec handle;
  ctx_rec *ctx;      /* the context it was instantiated in */
  uint64_t graph_id; /* the graph's id */
  graph_pins pins;   /* the graph's, when it was instantiated */
  bool foreign;      /* pins name what lives in other contexts than ctx */
  ctx_rec **ran_in;  /* the other contexts it was launched or uploaded in, held */
  uint32_t ran_in_count;
  struct exec_launcher *launcher; /* its launch functions (graph_exec.c), once lib/ asked */
} graph_exec_h;

/* The Graph object v, or NULL after throwing: TypeError for another object, LogicError once
 * destroyed, or once the graph a body belongs to was. */
graph_h *graph_get(napi_env env, napi_value v);
/* graph, unless pins_gone() for its pins: NULL after throwing a LogicError. For what makes the
 * driver read the nodes (instantiation, DOT, updates, captures into it). */
graph_h *graph_live(napi_env env, graph_h *graph);
/* What graph's nodes use: a body's nodes run in its graph's instantiations, so that graph's pins
 * (which hold every body's) are a body's. */
graph_pins *graph_pins_of(graph_h *graph);
/* The family of graph (made on first need); NULL when out of memory. */
graph_family *graph_family_of(graph_h *graph);
/* Wraps body, a conditional node's body in graph's family (counted), around obj; false after
 * throwing. */
bool graph_wrap_body(napi_env env, napi_value obj, CUgraph body, graph_family *family);
/* A number no other graph of the process has. */
uint64_t graph_next_id(void);

/* The node index v names in graph; false after throwing (a RangeError past its nodes). */
bool arg_node(napi_env env, napi_value v, const graph_h *graph, CUgraphNode *node);
/* The nodes the Uint32Array of node indices v names in graph, in *nodes (malloc'd, the caller
 * frees; NULL for none); false after throwing. Runs no JS. */
bool arg_nodes(napi_env env, napi_value v, const graph_h *graph, CUgraphNode **nodes,
               uint32_t *count);
/* Wraps handle (taken over) around obj, its nodes listed in the driver's order; NULL (after
 * throwing where it failed). */
napi_value graph_wrap(napi_env env, napi_value obj, CUgraph handle);
/* Whether graph may be destroyed or read whole (instantiated, updated from, copied as a child):
 * false after throwing a LogicError ("call: a stream is capturing into name...") while a capture
 * into it is under way. What the capture pins (modules, arrays) is not the graph's until it ends,
 * so a copy made meanwhile would outlive them; the driver (580) makes such copies. */
bool graph_not_captured(napi_env env, const graph_h *graph, const char *call, const char *name);
/* Ends the captures into graph (or into its bodies), for a graph going at collection (its streams
 * unreachable too: a capture's stream keeps its graph in lib/); false where one was left running,
 * its context detached (the graph must not be destroyed then). */
bool graph_end_captures(const graph_h *graph);

/* A capture into graph (or into a body of its family) ended without a graph: driver 580 frees the
 * graph (and, for a body, the graph it belongs to) then, so that any later call on it (a node
 * read, instantiation, cuGraphDestroy) reads freed memory; the CUDA documentation leaves it
 * undefined. The graph and its bodies refuse every use from then on, and are never destroyed. */
void graph_lose(graph_h *graph);
/* Whether graph is the driver's no more: lost (graph_lose), or a body of a graph destroyed since
 * (graph_get throws for either). */
bool graph_gone(const graph_h *graph);

/* Appends to graph's table the nodes the driver has that it lacks (a capture into the graph made
 * them), in the driver's order; false after throwing. graph_learn_nodes throws nothing: it
 * returns the failure (CUDA_ERROR_OUT_OF_MEMORY where memory ran out). */
bool graph_learn(napi_env env, graph_h *graph);
CUresult graph_learn_nodes(graph_h *graph);

#endif

"""The JavaScript that sets up a guest before its script: `api`, `call`, `callAll`, `console`, and the driver.

It evaluates to a function the engine calls once with the function names and limits (as JSON text); that
function defines the script's globals as frozen, non-writable and non-configurable, and returns `control`, the
only way the engine drives the guest:

    control("start", wrapped, plain)  compile the script (the rewrite with an implicit return first) and run it
    control("drain")                  JSON text of what the guest queued since the last drain: the calls it made,
                                      its console lines, and its outcome once it has one
    control("settle", id, ok, text)   answer call `id` with JSON text: the value, or the error info when not ok

The guest never calls into Python (the binding refuses Python callables while a CPU time limit is set): it
queues, and the engine drains the queue whenever the guest has nothing left to run. The guest checks the call
and console limits itself, so a script gets its errors synchronously; the host checks them all again. Every
string the guest hands out is JSON made by a `JSON.stringify` captured before the script runs, so unpaired
surrogates arrive escaped, and the drained batch is written from the driver's own strings and numbers (never
through a `toJSON` a script may have put on a prototype). The builtins the driver needs are captured first too:
a script that tampers with prototypes breaks only itself. `call` refuses names too long to be any function's;
the host refuses the other names outside the function list.
"""

from __future__ import annotations

__all__ = ["LINE_OFFSET", "PRELUDE", "REMOVED_GLOBALS"]

#: The script's first line is this line of the code QuickJS compiles (both it and the prelude are `<input>`),
#: so a stack line past it is the script's line plus the offset, and one before it is the prelude's.
LINE_OFFSET = 10_000

#: Globals deleted before the script runs: none gives any reach, they are just surface the scripts do not need
#: (`performance` a finer clock, `WeakRef` and `FinalizationRegistry` a view of the garbage collector).
REMOVED_GLOBALS = (
    "__date_clock",
    "Atomics",
    "SharedArrayBuffer",
    "performance",
    "queueMicrotask",
    "WeakRef",
    "FinalizationRegistry",
)

PRELUDE = r"""
(function (namesText, limitsText) {
  "use strict";
  const LINE_OFFSET = @LINE_OFFSET@, MAX_NAME = 200;
  const G = globalThis;
  const O = Object, P = Promise, E = Error, TE = TypeError, SE = String;
  const freeze = O.freeze, define = O.defineProperty, create = O.create, keys = O.keys;
  const isArray = Array.isArray, apply = Reflect.apply, then = P.prototype.then;
  const parse = JSON.parse, stringify = JSON.stringify;
  const indirectEval = G.eval;
  const names = parse(namesText), limits = parse(limitsText);
  const pending = create(null);
  const known = create(null);
  for (let i = 0; i < names.length; i++) known[names[i]] = true;
  let calls = [], logs = [], dropped = 0, outcome = null;
  let callCount = 0, logLines = 0, logBytes = 0;

  // The UTF-8 size of `text`, counting until it passes `stop`; with `cut`, the length of the prefix that fits.
  function utf8Length(text, stop, cut) {
    let size = 0, i = 0;
    while (i < text.length) {
      const code = text.charCodeAt(i);
      const pair = code >= 0xd800 && code < 0xdc00 && i + 1 < text.length;
      const bytes = code < 0x80 ? 1 : code < 0x800 ? 2 : pair ? 4 : 3;
      if (size + bytes > stop) return cut ? i : size + bytes;
      size += bytes;
      i += pair ? 2 : 1;
    }
    return cut ? i : size;
  }

  function hostDone(ok, kind, text) {
    if (outcome === null) outcome = [ok, kind, text];
  }

  const replacer = function (key, value) { return typeof value === "bigint" ? SE(value) : value; };

  function callError(info) {
    const error = new E(SE(info.message));
    if (info.status !== undefined && info.status !== null) error.status = info.status;
    if ("body" in info) error.body = info.body;
    if (info.function !== undefined) error.function = info.function;
    return error;
  }

  function call(name, args) {
    if (typeof name !== "string") {
      throw new TE('call(name, args): name must be a string such as "orders.get_order", got ' + typeof name);
    }
    if (name.length > MAX_NAME && known[name] !== true) {
      throw new TE("call(name, args): no function has a name of " + name.length + " characters; " +
        "call one of the catalog's functions, as module.function");
    }
    if (args === undefined || args === null) args = {};
    if (typeof args !== "object" || isArray(args)) {
      throw new TE("call(" + stringify(name) + ", args): args must be an object of the function's arguments");
    }
    let text;
    try {
      text = stringify(args, replacer);
    } catch (error) {
      throw new TE("call(" + stringify(name) + ", args): args cannot be converted to JSON: " + describeValue(error));
    }
    if (typeof text !== "string" || text[0] !== "{") {
      throw new TE("call(" + stringify(name) + ", args): args must convert to a JSON object (check its toJSON)");
    }
    if (callCount >= limits.maxCalls) {
      throw callError({
        message: "this script already made " + limits.maxCalls + " calls, the most one script may make; " +
          "make fewer calls (list functions with filters return many items at once)",
        function: name,
      });
    }
    if (utf8Length(text, limits.maxArgBytes, false) > limits.maxArgBytes) {
      throw callError({
        message: "the arguments of " + name + " are " + text.length + " characters of JSON, over the " +
          limits.maxArgBytes + "-byte limit for one call; pass less data",
        function: name,
      });
    }
    const id = ++callCount;
    calls[calls.length] = [id, name, text];
    // The call site's stack, so an error the call ends with points at the script's line, not at the driver.
    const site = new E().stack;
    let settle;
    const promise = new P(function (resolve, reject) { settle = [resolve, reject, site]; });
    pending[id] = settle;
    return promise;
  }

  // An error callAll returns in place of a result: its name and message are enumerable, so a script that
  // returns the results as they are shows what failed, not {}.
  function shown(error) {
    if (error instanceof E) {
      try {
        define(error, "name", { value: SE(error.name), enumerable: true, writable: true, configurable: true });
        define(error, "message", { value: SE(error.message), enumerable: true, writable: true, configurable: true });
      } catch (ignored) {
        // a frozen error the script made stays as it is
      }
    }
    return error;
  }

  function callAll(items) {
    if (!isArray(items)) throw new TE("callAll(calls): calls must be an array of {name, args}");
    const promises = [];
    for (let i = 0; i < items.length; i++) {
      const item = items[i];
      let promise;
      try {
        if (item === null || typeof item !== "object") throw new TE("callAll: item " + i + " is not {name, args}");
        promise = apply(then, call(item.name, item.args), [undefined, shown]);
      } catch (error) {
        promise = P.resolve(shown(error));
      }
      promises[i] = promise;
    }
    return P.all(promises);
  }

  function describeValue(value) {
    try {
      if (typeof value === "string") return value;
      if (value instanceof E) return SE(value);
      if (value === undefined || typeof value === "function" || typeof value === "symbol") return SE(value);
      const text = stringify(value, replacer);
      return text === undefined ? SE(value) : text;
    } catch (error) {
      try { return SE(value); } catch (again) { return "[value that cannot be printed]"; }
    }
  }

  function logger(prefix) {
    return function log() {
      const room = limits.maxLogBytes - logBytes;
      if (logLines >= limits.maxLogLines || room <= 0) {
        dropped++;
        return;
      }
      let line = prefix;
      for (let i = 0; i < arguments.length && line.length <= room; i++) {
        line += (i ? " " : "") + describeValue(arguments[i]);
      }
      line = line.slice(0, utf8Length(line, room, true));
      logLines++;
      logBytes += utf8Length(line, Infinity, false);
      logs[logs.length] = line;
    };
  }

  const api = create(null);
  const modules = create(null);
  for (let i = 0; i < names.length; i++) {
    const full = names[i], dot = full.indexOf(".");
    const moduleName = full.slice(0, dot), functionName = full.slice(dot + 1);
    let module = modules[moduleName];
    if (module === undefined) {
      module = modules[moduleName] = create(null);
      define(api, moduleName, { value: module, enumerable: true });
    }
    const fn = function (args) { return call(full, args); };
    define(fn, "name", { value: functionName });
    define(module, functionName, { value: freeze(fn), enumerable: true });
  }
  const moduleNames = keys(modules);
  for (let i = 0; i < moduleNames.length; i++) freeze(modules[moduleNames[i]]);
  freeze(api);

  const console = create(null);
  define(console, "log", { value: freeze(logger("")), enumerable: true });
  define(console, "info", { value: freeze(logger("")), enumerable: true });
  define(console, "debug", { value: freeze(logger("")), enumerable: true });
  define(console, "warn", { value: freeze(logger("warn: ")), enumerable: true });
  define(console, "error", { value: freeze(logger("error: ")), enumerable: true });
  freeze(console);

  const globals = { api: api, call: freeze(call), callAll: freeze(callAll), console: console };
  const globalNames = keys(globals);
  for (let i = 0; i < globalNames.length; i++) {
    const value = globals[globalNames[i]];
    define(G, globalNames[i], { value: value, writable: false, configurable: false, enumerable: false });
  }

  function errorInfo(error) {
    if (error instanceof E) {
      const info = { name: SE(error.name), message: SE(error.message), stack: SE(error.stack || "") };
      if (error.status !== undefined) info.status = error.status;
      if (error.body !== undefined) info.body = error.body;
      if (error.function !== undefined) info.function = SE(error.function);
      return info;
    }
    return { name: "Error", message: "the script threw " + describeValue(error), stack: "" };
  }

  // The error info as JSON, written field by field: stringify on the info object would call any toJSON the
  // script put on Object.prototype. Only the body, the script's own value, goes through stringify whole.
  function fail(error, kind) {
    let text;
    try {
      const info = errorInfo(error);
      text = '{"name":' + stringify(SE(info.name)) + ',"message":' + stringify(SE(info.message)) +
        ',"stack":' + stringify(SE(info.stack));
      if (typeof info.status === "number") text += ',"status":' + stringify(info.status);
      if (info.function !== undefined) text += ',"function":' + stringify(SE(info.function));
      if (info.body !== undefined) {
        let body;
        try { body = stringify(info.body, replacer); } catch (again) { body = undefined; }
        if (typeof body === "string") text += ',"body":' + body;
      }
      text += "}";
    } catch (again) {
      text = '{"name":"Error","message":"the script threw an error that cannot be described"}';
    }
    hostDone(false, kind || "error", text);
  }

  function finish(value) {
    if (typeof value === "string") return hostDone(true, "text", stringify(value));
    if (value === undefined) return hostDone(true, "undefined", "null");
    let text;
    try {
      text = stringify(value, replacer);
    } catch (error) {
      return fail(new TE("the result cannot be converted to JSON: " + describeValue(error)), "result");
    }
    if (text === undefined) return hostDone(true, "undefined", "null");
    hostDone(true, "json", text);
  }

  function compile(text) {
    const main = indirectEval("(async function () {" + "\n".repeat(LINE_OFFSET) + text + "\n})");
    if (typeof main !== "function") throw new SyntaxError("the script must not close the function it runs in");
    return main;
  }

  function start(wrapped, plain) {
    let main;
    try {
      main = compile(wrapped === null ? plain : wrapped);
    } catch (error) {
      if (wrapped === null || !(error instanceof SyntaxError)) return fail(error, "syntax");
      try {
        main = compile(plain);
      } catch (again) {
        return fail(again, "syntax");
      }
    }
    let promise;
    try {
      promise = main();
    } catch (error) {
      return fail(error);
    }
    apply(then, promise, [finish, function (error) { fail(error); }]);
  }

  function settle(id, ok, text) {
    const entry = pending[id];
    if (entry === undefined) return;
    delete pending[id];
    let value;
    try {
      value = parse(text);
    } catch (error) {
      return entry[1](callError({ message: "the host sent an answer that is not JSON" }));
    }
    if (ok) return entry[0](value);
    const error = callError(value);
    define(error, "stack", { value: entry[2], writable: true, configurable: true });
    entry[1](error);
  }

  // Built from strings and numbers the driver made: JSON.stringify on an object or array would call any toJSON
  // the script put on a prototype, and the engine would read a batch the script shaped.
  function drain() {
    let text = '{"dropped":' + dropped + ',"logs":[';
    for (let i = 0; i < logs.length; i++) text += (i ? "," : "") + stringify(logs[i]);
    text += '],"calls":[';
    for (let i = 0; i < calls.length; i++) {
      const entry = calls[i];
      text += (i ? ",[" : "[") + entry[0] + "," + stringify(entry[1]) + "," + stringify(entry[2]) + "]";
    }
    text += '],"outcome":';
    text += outcome === null ? "null" :
      "[" + (outcome[0] === true) + "," + stringify(outcome[1]) + "," + stringify(outcome[2]) + "]";
    text += "}";
    calls = [];
    logs = [];
    dropped = 0;
    return SE(text);  // flat: QuickJS-ng keeps a long concatenation as a rope, which its binding cannot return
  }

  return function control(op, a, b, c) {
    if (op === "start") return start(a, b);
    if (op === "drain") return drain();
    if (op === "settle") return settle(a, b, c);
    throw new TE("unknown control op " + op);
  };
})
""".replace("@LINE_OFFSET@", str(LINE_OFFSET))

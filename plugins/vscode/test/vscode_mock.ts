// The small part of the vscode API that the modules under unit test touch, installed as
// the module "vscode" for this process only (the real one exists only inside the editor).
import Module = require('module');

export class Position {
    constructor(readonly line: number, readonly character: number) {}
}
export class Range {
    constructor(readonly start: Position, readonly end: Position) {}
}
export const InlineCompletionTriggerKind = { Invoke: 0, Automatic: 1 } as const;

export const mock = { Position, Range, InlineCompletionTriggerKind };

type ResolveFn = (request: string, ...rest: unknown[]) => string;
const m = Module as unknown as { _resolveFilename: ResolveFn };
const original = m._resolveFilename;
m._resolveFilename = function (request: string, ...rest: unknown[]) {
    if (request === 'vscode') return __filename;
    return original.call(this, request, ...rest);
};

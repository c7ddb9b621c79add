// What tests/mcp/ts/client.mjs and oauth.mjs share: their packages, from
// the folder tools/node-env installs (target/node, or QUARRY_NODE_MODULES),
// and the summary they print.
//
// The packages are imported by file URL: an ES module's bare imports
// resolve from the importing file's own folder (NODE_PATH is for
// require()), and these scripts live in the source tree while
// node_modules lives in target/node. The SDK's own imports resolve from
// where it is installed, as usual.

import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

export const MODULES =
    process.env.QUARRY_NODE_MODULES ??
    fileURLToPath(new URL("../../../target/node/node_modules/", import.meta.url));

if (!existsSync(join(MODULES, "@modelcontextprotocol/sdk/package.json"))) {
    console.error(`no @modelcontextprotocol/sdk in ${MODULES}: run tools/node-env`);
    process.exit(2);
}

/** A module of the installed packages, by its path under node_modules. */
export function load(path) {
    return import(pathToFileURL(join(MODULES, path)).href);
}

/** A module of the TypeScript SDK (its ES module build), e.g. "client/index.js". */
export function sdk(path) {
    return load(`@modelcontextprotocol/sdk/dist/esm/${path}`);
}

/** The installed version of a package. */
export function version(name) {
    return JSON.parse(readFileSync(join(MODULES, name, "package.json"), "utf8")).version;
}

/** `--name value` pairs of the command line. */
export function options(required) {
    const args = {};
    const argv = process.argv.slice(2);
    for (let i = 0; i < argv.length; i += 2) {
        if (!argv[i].startsWith("--") || argv[i + 1] === undefined) {
            console.error(`unexpected argument ${argv[i]}`);
            process.exit(2);
        }
        args[argv[i].slice(2)] = argv[i + 1];
    }
    for (const name of required) {
        if (args[name] === undefined) {
            console.error(`--${name} is required`);
            process.exit(2);
        }
    }
    return args;
}

/** Prints the summary as one JSON line (the last line of stdout). */
export function say(summary) {
    process.stdout.write(JSON.stringify(summary) + "\n");
}

/** What an error was, for a summary. */
export function described(error) {
    if (error === undefined || error === null) return null;
    return {
        name: error.constructor?.name ?? typeof error,
        code: error.code ?? null,
        message: String(error.message ?? error),
    };
}

/** The JSON of a result's one text block, or null. */
export function textJson(result) {
    const texts = (result?.content ?? []).filter((c) => c.type === "text");
    if (texts.length !== 1) return null;
    try {
        return JSON.parse(texts[0].text);
    } catch {
        return null;
    }
}

/** JSON values equal (objects compared key by key, in any order). */
export function sameJson(a, b) {
    if (a === b) return true;
    if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return false;
    if (Array.isArray(a) !== Array.isArray(b)) return false;
    const keys = Object.keys(a);
    if (keys.length !== Object.keys(b).length) return false;
    return keys.every((k) => Object.hasOwn(b, k) && sameJson(a[k], b[k]));
}

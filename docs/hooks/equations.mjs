// Typeset TeX with KaTeX (called by docs/hooks/equations.py: `node equations.mjs KATEX_JS`; see there for why).
//
// KATEX_JS: the verified node_modules/katex/dist/katex.js (CommonJS build).
// stdin:  [{"tex": "...", "display": true|false}, ...]
// stdout: [{"html": "..."} | {"error": "..."}, ...], one entry per input, in order.
// Strict: an unknown command, an unbalanced brace or a character KaTeX cannot typeset is an error,
// never a red message on the page. Output is HTML (what readers see) plus MathML (what screen
// readers read), with the TeX source kept as the MathML annotation (equations.py drops it).
import fs from "node:fs";
import { createRequire } from "node:module";

const require = createRequire(import.meta.url);
const katex = require(process.argv[2]);
const items = JSON.parse(fs.readFileSync(0, "utf8"));
const out = items.map(({ tex, display }) => {
  try {
    return {
      html: katex.renderToString(tex, {
        displayMode: display, output: "htmlAndMathml", throwOnError: true, strict: "error", trust: false,
      }),
    };
  } catch (err) {
    return { error: String(err && err.message ? err.message : err) };
  }
});
process.stdout.write(JSON.stringify(out));

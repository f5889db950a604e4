// Realistic Code Mode cells that must pass the source checks. Cells are separated by a line
// holding only `//----`. Several use shell words as identifiers or hold shell text in strings,
// comments, templates and regular expressions.
//----
return 1;
//----
const rows = await shipping_list({});
return rows.filter((r) => !r.paid).length;
//----
text("hello"); json({ a: 1 }); return null;
//----
const ls = await list_files({ path: "." });
return ls.map((f) => f.name);
//----
const git = { status: "clean" };
return git.status;
//----
let cd = 0;
for (const dir of ["a", "b"]) cd += dir.length;
return cd;
//----
ls({ path: "/tmp" });
//----
await ls({ path: "src", recursive: true });
//----
git.status;
//----
echo({ message: "ls -la" });
//----
await echo({ cmd: "git status && npm install" });
//----
const cmd = `ls -la ${dir}`;
return cmd;
//----
// ls -la would list files; here we call the tool instead
return await list_files({});
//----
/* git status
   npm install */
return "ok";
//----
const message = "require('fs') is not available";
return message;
//----
const pattern = /require\(['"]fs['"]\)/g;
return pattern.test(source);
//----
const re = /import\s*\(/;
return re.source;
//----
return `template with require("x") and import("y") inside text`;
//----
const x = a / b / c;
return x;
//----
const total = rows.reduce((sum, r) => sum + r.tons, 0) / rows.length;
return total;
//----
if (rows.length === 0) {
  return "empty";
}
return rows[0];
//----
for (const row of rows) {
  text(row.id);
}
//----
for await (const chunk of stream) text(chunk);
//----
while (queue.length) { queue.pop(); }
//----
const find = (items, id) => items.find((i) => i.id === id);
return find(rows, "a");
//----
find({ query: "shipping" });
//----
sort(rows);
//----
test = 1;
//----
date = new Date(0).toISOString();
//----
node.children.forEach((c) => text(c.name));
//----
const obj = { require: true, import: false };
return obj;
//----
class Loader { require(name) { return name; } import() { return 1; } }
return new Loader().require("x");
//----
const modules = { require(name) { return name; } };
return modules.require("fs");
//----
function require(name) { return name; }
//----
const result = await catalog.search("git status");
return result;
//----
const tools = await catalog.search("shell");
return tools.map((t) => t.name);
//----
const api = (await API.read("tools/echo.d.ts")).content;
return api;
//----
try { return await failing_tool({}); } catch (error) { return { status: "unavailable", error: error.message }; }
//----
const [a, b] = await Promise.all([echo({ n: 1 }), echo({ n: 2 })]);
return a.n + b.n;
//----
await yield_control("checkpoint");
return "resumed";
//----
setTimeout(() => text("later"), 10);
await new Promise((resolve) => setTimeout(resolve, 20));
//----
console.log("ls -la | grep x");
//----
console.log(`git commit -m "msg"`);
//----
const shell = "cd src && make && ./run.sh";
text(shell);
//----
const lines = output.split("\n").filter((l) => l.startsWith("#"));
return lines;
//----
x = y / 2 / z;
//----
a = b
/hi/g.exec(c);
//----
const ratio = (a + b) / 2;
const half = ratio / 2; // divide again /not a regex/
return half;
//----
async function main() { return await echo({}); }
return await main();
//----
const { status } = await echo({ status: "ok" });
return status;
//----
label: for (const x of [1, 2]) { if (x) break label; }
//----
return typeof require;
//----
return typeof process === "undefined";
//----
const path = "./scripts/build.sh";
return path;
//----
const url = "https://example.com/import(x)";
return url;
//----
return [1, 2, 3].map((n) => n * 2);
//----
return { ls: 1, cd: 2, git: 3, npm: 4 };
//----
(async () => { await echo({}); })();
//----
[1, 2].forEach((n) => text(String(n)));
//----
!flag && text("off");
//----
`plain template`;
//----
const tagged = String.raw`ls -la \n`;
return tagged;
//----
const nested = `outer ${`inner ${"require('x')"}`}`;
return nested;
//----
const s = 'it\'s ls -la';
return s;
//----
const big = 1e21, small = 1e-7;
return [big, small];
//----
return JSON.stringify({ cmd: "npm install" });
//----
const env = { FOO: 1 };
return env.FOO;
//----
FOO = 1;
//----
total = count * 2;
//----
value = a ? b : c;
//----
result = await echo({});
//----
ready = typeof ls === "function";
//----
export_data = rows;
//----
const ms = 5;
await new Promise((r) => setTimeout(r, ms));
return "slept";
//----
const re2 = /[/]import\(/;
return re2.test("x");
//----
return items.length > 0 ? items[0] : null;
//----
const mdTable = "| a | b |\n|---|---|";
return mdTable;

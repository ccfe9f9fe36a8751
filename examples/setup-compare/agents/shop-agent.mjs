// One scripted agent for every variant: what it does depends only on what the variant's setup
// put in its hands (ctx.setup), as a real agent's would. With the house-style skill it formats
// prices as the skill's text says; with the rates MCP server it asks the server for the rate.
// Without them it does what an agent would guess, and the tests tell the difference.

const FILE = "src/money.js";

/** The house style, read from the skill's own examples (`EUR 12.50`), or the agent's guess. */
function priceStyle(setup) {
  const skill = setup.components.find((c) => c.skill !== undefined && c.text !== undefined);
  const example = skill?.text.match(/`([A-Z]{3}) (\d{1,3}(,\d{3})*\.\d{2})`/g) ?? [];
  if (example.length === 0) return { codeFirst: false, thousands: false };
  return { codeFirst: true, thousands: example.some((e) => e.includes(",")) };
}

function formatPriceSource(style) {
  const amount = style.thousands
    ? `(cents / 100).toLocaleString("en-US", { minimumFractionDigits: 2, maximumFractionDigits: 2 })`
    : `(cents / 100).toFixed(2)`;
  const result = style.codeFirst ? "`${currency} ${amount}`" : "`${amount} ${currency}`";
  return `export function formatPrice(cents, currency) {\n  const amount = ${amount};\n  return ${result};\n}`;
}

/** The rate from the variant's rates tool, or a guess when the call is refused or fails. */
async function usdToEurRate(setup, tools) {
  const listed = setup.components
    .flatMap((c) => c.mcp?.tools ?? [])
    .find((t) => t.name.endsWith("__exchange_rate"));
  // Without the server the agent still tries the tool it has heard of: the policy denies it.
  const answer = await tools.call(listed?.name ?? "mcp__rates__exchange_rate", {
    from: "USD",
    to: "EUR",
  });
  return answer.ok
    ? { rate: answer.result.rate, from: "the rates server" }
    : { rate: 0.92, from: "a guess" };
}

async function replaceFunction(tools, name, source) {
  const read = await tools.read(FILE);
  if (!read.ok) throw new Error(`cannot read ${FILE}: ${read.error ?? read.reason}`);
  const start = read.content.indexOf(`export function ${name}(`);
  const end = read.content.indexOf("\n}\n", start) + 2;
  const edited = await tools.edit(FILE, read.content.slice(start, end), source);
  if (!edited.ok) throw new Error(`cannot edit ${FILE}: ${edited.error ?? edited.reason}`);
}

export default async function shopAgent({ trial, setup, tools }) {
  if (trial.task === "format-price") {
    const style = priceStyle(setup);
    await replaceFunction(tools, "formatPrice", formatPriceSource(style));
    await tools.bash("npm test");
    return `formatPrice writes ${style.codeFirst ? "the code first (house style)" : "the amount first (my guess)"}`;
  }
  const { rate, from } = await usdToEurRate(setup, tools);
  await replaceFunction(
    tools,
    "usdToEur",
    `export function usdToEur(cents) {\n  return Math.round(cents * ${rate});\n}`,
  );
  await tools.bash("npm test");
  return `usdToEur converts at ${rate}, from ${from}`;
}

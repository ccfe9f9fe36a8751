// verdict.html's plot of pass rate (with its interval) against mean cost per variant, as inline
// SVG: no script, no external resource, every label escaped. The frontier (no other variant
// cheaper and at least as good) is joined by a line, so the cheapest good setup is seen at once.
import type { CostPoint } from "./cost.js";
import { percent, usd } from "./format.js";
import { esc } from "./html-text.js";

const WIDTH = 640;
const HEIGHT = 300;
const MARGIN = { left: 56, right: 150, top: 16, bottom: 44 };

export function costPlot(
  points: readonly CostPoint[],
  basis: "reported" | "estimated",
  missing: readonly string[],
): string {
  const innerWidth = WIDTH - MARGIN.left - MARGIN.right;
  const innerHeight = HEIGHT - MARGIN.top - MARGIN.bottom;
  const maxCost = Math.max(...points.map((p) => p.cost));
  const xMax = maxCost > 0 ? maxCost * 1.15 : 1;
  const x = (cost: number) => MARGIN.left + (cost / xMax) * innerWidth;
  const y = (rate: number) => MARGIN.top + (1 - rate) * innerHeight;
  const f = (n: number) => n.toFixed(1);
  const parts: string[] = [];
  for (const rate of [0, 0.25, 0.5, 0.75, 1])
    parts.push(
      `<line x1="${MARGIN.left}" x2="${MARGIN.left + innerWidth}" y1="${f(y(rate))}" y2="${f(y(rate))}" stroke="#ddd"/>`,
      `<text x="${MARGIN.left - 6}" y="${f(y(rate) + 4)}" text-anchor="end" font-size="11">${percent(rate)}</text>`,
    );
  for (const step of [0, 1, 2, 3, 4]) {
    const cost = (xMax * step) / 4;
    parts.push(
      `<text x="${f(x(cost))}" y="${MARGIN.top + innerHeight + 16}" text-anchor="middle" font-size="11">${esc(usd(cost))}</text>`,
    );
  }
  parts.push(
    `<line x1="${MARGIN.left}" x2="${MARGIN.left}" y1="${MARGIN.top}" y2="${MARGIN.top + innerHeight}" stroke="#888"/>`,
    `<line x1="${MARGIN.left}" x2="${MARGIN.left + innerWidth}" y1="${MARGIN.top + innerHeight}" y2="${MARGIN.top + innerHeight}" stroke="#888"/>`,
    `<text x="${MARGIN.left + innerWidth / 2}" y="${HEIGHT - 6}" text-anchor="middle" font-size="12">mean cost per completed trial (USD${basis === "estimated" ? ", with list-price estimates" : ""})</text>`,
    `<text transform="translate(14 ${MARGIN.top + innerHeight / 2}) rotate(-90)" text-anchor="middle" font-size="12">pass rate</text>`,
  );
  const frontier = points.filter((p) => p.frontier).sort((a, b) => a.cost - b.cost);
  if (frontier.length > 1)
    parts.push(
      `<polyline class="frontier" fill="none" stroke="#2b7a3d" stroke-dasharray="4 3" points="${frontier.map((p) => `${f(x(p.cost))},${f(y(p.passRate))}`).join(" ")}"/>`,
    );
  for (const point of points) {
    const cx = x(point.cost);
    const cy = y(point.passRate);
    const color = point.frontier ? "#2b7a3d" : "#555";
    const whisker =
      point.interval === null
        ? ""
        : `<line x1="${f(cx)}" x2="${f(cx)}" y1="${f(y(point.interval.upper))}" y2="${f(y(point.interval.lower))}" stroke="${color}" stroke-width="1.5"/>`;
    const mark = point.isBaseline
      ? `<rect x="${f(cx - 5)}" y="${f(cy - 5)}" width="10" height="10" fill="${color}"/>`
      : `<circle cx="${f(cx)}" cy="${f(cy)}" r="5" fill="${point.frontier ? color : "#fff"}" stroke="${color}" stroke-width="2"/>`;
    const title = `${point.variant}${point.isBaseline ? " (baseline)" : ""}: ${point.label}, pass rate ${percent(point.passRate)}${point.interval ? ` [${percent(point.interval.lower)}–${percent(point.interval.upper)}]` : ""}, ${usd(point.cost)} per trial${point.frontier ? ", on the frontier" : ""}`;
    parts.push(
      `<g class="point" data-variant="${esc(point.variant)}" data-baseline="${point.isBaseline}" data-frontier="${point.frontier}"><title>${esc(title)}</title>${whisker}${mark}<text x="${f(cx + 8)}" y="${f(cy - 6)}" font-size="11">${esc(point.variant)}${point.isBaseline ? " (baseline)" : ""}</text></g>`,
    );
  }
  const note =
    missing.length === 0
      ? ""
      : `<p class="note">Not plotted (no pass rate or no cost): ${missing.map(esc).join(", ")}.</p>`;
  return [
    `<figure class="cost-plot"><svg id="cost-plot" role="img" aria-label="pass rate against mean cost per variant" viewBox="0 0 ${WIDTH} ${HEIGHT}" width="${WIDTH}" height="${HEIGHT}" xmlns="http://www.w3.org/2000/svg">${parts.join("")}</svg>`,
    `<figcaption class="note">Each variant at its mean cost and pass rate, the line its 95% interval; the square is the baseline; filled points joined by the dashed line are the frontier (no other variant costs less and passes as often).</figcaption></figure>`,
    note,
  ].join("\n");
}

import type { HarnessIrBundle, HarnessRevision } from "../ir/index.js";
import { PROMPT_PREAMBLE_MECHANISM } from "./profiles.js";

/**
 * The advisory guidance a v0.1 executor prepends to the task prompt: a header naming the
 * revision, one `- [<component>] <description>` bullet per realization materialized as prompt
 * guidance, and one warning line per degradation. A component realized as `unsupported` gets
 * no bullet: putting its text into the prompt would materialize it after all, and the revision
 * would then misstate what the agent received.
 */
export function buildRunPreamble(revision: HarnessRevision, bundle: HarnessIrBundle): string {
  const contracts = new Map(bundle.components.map((component) => [component.id, component]));
  const lines = [
    `Harness revision ${revision.revisionId} (composition ${revision.composition.id}, host ${revision.target.host})`,
  ];
  const bullets: string[] = [];
  const warnings: string[] = [];
  for (const realization of revision.realization) {
    if (realization.action === "failed") continue;
    if (realization.materializedMechanism === PROMPT_PREAMBLE_MECHANISM) {
      const contract = contracts.get(realization.componentId);
      const text =
        contract?.description ??
        `(${contract?.componentKind ?? "unknown"} component without a description)`;
      bullets.push(`- [${realization.componentId}] ${oneLine(text)}`);
    }
    if (realization.action === "degraded") {
      const reason = realization.reason === undefined ? "" : `: ${oneLine(realization.reason)}`;
      warnings.push(
        `Warning: [${realization.componentId}] degraded to '${realization.realized}'${reason}`,
      );
    }
  }
  if (bullets.length > 0) {
    lines.push("", "Follow this guidance from the harness (advisory; it is not enforced):");
    lines.push(...bullets);
  }
  if (warnings.length > 0) lines.push("", ...warnings);
  return `${lines.join("\n")}\n`;
}

// Descriptions and notes are single-line in practice, but a string may contain "\n" escapes;
// a bullet must stay one line so the preamble's structure cannot be spoofed by content.
function oneLine(text: string): string {
  return text.replace(/\s*[\r\n]+\s*/g, " ");
}

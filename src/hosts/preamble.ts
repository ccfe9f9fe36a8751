import type { HarnessIrBundle, HarnessRevision } from "../ir/index.js";
import { PROMPT_PREAMBLE_MECHANISM } from "./profiles.js";

/**
 * The guidance an executor prepends to the task prompt: a header naming the revision, one
 * `- [<component>] <description>` bullet per realization materialized as prompt guidance, one
 * bullet per realization the executor enforces (so the agent knows the rule a denial cites), and
 * one warning line per degradation. A component realized as `unsupported` gets no bullet: putting
 * its text into the prompt would materialize it after all, and the revision would then misstate
 * what the agent received.
 */
export function buildRunPreamble(revision: HarnessRevision, bundle: HarnessIrBundle): string {
  const contracts = new Map(bundle.components.map((component) => [component.id, component]));
  const lines = [
    `Harness revision ${revision.revisionId} (composition ${revision.composition.id}, host ${revision.target.host})`,
  ];
  const bullets: string[] = [];
  const enforced: string[] = [];
  const warnings: string[] = [];
  const bullet = (componentId: string) => {
    const contract = contracts.get(componentId);
    const text =
      contract?.description ??
      `(${contract?.componentKind ?? "unknown"} component without a description)`;
    return `- [${componentId}] ${oneLine(text)}`;
  };
  for (const realization of revision.realization) {
    if (realization.action === "failed") continue;
    if (realization.materializedMechanism === PROMPT_PREAMBLE_MECHANISM) {
      bullets.push(bullet(realization.componentId));
    } else if (realization.materializedMechanism !== null && realization.realized === "enforced") {
      enforced.push(bullet(realization.componentId));
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
  if (enforced.length > 0) {
    lines.push("", "The harness enforces these rules (tool calls that break them are denied):");
    lines.push(...enforced);
  }
  if (warnings.length > 0) lines.push("", ...warnings);
  return `${lines.join("\n")}\n`;
}

// Descriptions and notes are single-line in practice, but a string may contain "\n" escapes;
// a bullet must stay one line so the preamble's structure cannot be spoofed by content.
function oneLine(text: string): string {
  return text.replace(/\s*[\r\n]+\s*/g, " ");
}

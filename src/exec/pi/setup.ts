// A variant's setup on Pi, which runs answer-only: instructions appended to Pi's system prompt
// (`appendSystemPrompt` of its resource loader), confirmed by the system prompt Pi's session built
// carrying the run's fresh marker. Nothing else can be handed to a Pi without tools (a skill's
// text is opened with a read tool, an MCP server's tools are tools), so every other mechanism
// fails to load, as its requirement's on-degrade says.
import type { HostSetupReport, SetupComponent } from "../setup/contract.js";
import {
  markedInstructions,
  type SetupReportBook,
  setupReportBook,
  sourceVerified,
} from "../setup/start.js";

export interface PiSetup {
  /** The texts for `appendSystemPrompt`, each under its marker. */
  append: string[];
  /** Reads the system prompt Pi's session built: each instructions component it carries loaded. */
  confirm(systemPrompt: string): void;
  book: SetupReportBook;
}

export async function preparePiSetup(setup: readonly SetupComponent[]): Promise<PiSetup> {
  const book = setupReportBook(setup);
  const markers = new Map<string, string>();
  const append: string[] = [];
  for (const component of setup) {
    if (component.mechanism !== "system-instruction") {
      book.report(component, {
        status: "failed",
        reason: `Pi runs answer-only, without tools: it has no ${component.mechanism} harnesslab can hand it`,
      });
      continue;
    }
    if (!(await sourceVerified(component, book))) continue;
    const marked = await markedInstructions(component, book);
    if (marked === undefined) continue;
    markers.set(component.id, marked.marker);
    append.push(marked.text);
    book.report(component, { reason: "the system prompt Pi's session built does not carry it" });
  }
  return {
    append,
    confirm(systemPrompt) {
      for (const [id, marker] of markers) if (systemPrompt.includes(marker)) book.confirm(id);
    },
    book,
  };
}

/** The components a `fail` requirement needs that did not load (Pi's prompt is built at once). */
export function piSetupFatal(
  setup: readonly SetupComponent[],
  reports: readonly HostSetupReport[],
): HostSetupReport[] {
  return reports.filter(
    (r) => r.status !== "loaded" && setup.find((c) => c.id === r.component)?.onDegrade === "fail",
  );
}

// How a host's report that it sent a component to the model is read from the model requests: a
// marker fresh for each run, found however the request body is cut into chunks.
import { describe, expect, it } from "vitest";
import {
  fatalUnloaded,
  runMarker,
  skillToHand,
  watchForMarkers,
} from "../../src/exec/setup/start.js";

describe("setup markers", () => {
  it("are fresh for each run, so an agent cannot write one it was not given", () => {
    const first = runMarker("instructions-conventions");
    const second = runMarker("instructions-conventions");
    expect(first).toMatch(/^harnesslab-instructions-conventions-[0-9a-f]{16}$/);
    expect(second).not.toBe(first);
  });

  it("are found once each, split across chunks or not, and nothing else counts", () => {
    const found: string[] = [];
    const markerA = runMarker("a");
    const markerB = runMarker("b");
    const watch = watchForMarkers(
      new Map([
        ["a", markerA],
        ["b", markerB],
      ]),
      (id) => found.push(id),
    );
    const body = `{"system":"x ${markerA} y","messages":[]}`;
    const cut = body.indexOf(markerA) + 7;
    watch(Buffer.from(body.slice(0, cut)));
    watch(Buffer.from(body.slice(cut)));
    // The same marker again, and a near miss of the other one: nothing more.
    watch(Buffer.from(body));
    watch(Buffer.from(markerB.slice(0, -1)));
    expect(found).toEqual(["a"]);
    watch(Buffer.from(`…${markerB}…`));
    expect(found).toEqual(["a", "b"]);
  });
});

describe("a setup's components once the run is over", () => {
  const component = (
    id: string,
    mechanism: "system-instruction" | "native-hook" | "native-skill",
    onDegrade: "fail" | "report",
  ) => ({
    id,
    kind: mechanism === "native-hook" ? ("hook" as const) : ("skill" as const),
    mechanism,
    strength: "wired" as const,
    onDegrade,
  });
  it("names the ones a `fail` requirement needed and the host never confirmed, but not a hook whose event never came", () => {
    const setup = [
      component("rules", "system-instruction", "fail"),
      component("style", "native-skill", "fail"),
      component("notes", "system-instruction", "report"),
      component("stop-check", "native-hook", "fail"),
      component("broken-hook", "native-hook", "fail"),
    ];
    const fatal = fatalUnloaded(setup, [
      { component: "rules", mechanism: "system-instruction", status: "unconfirmed" },
      { component: "style", mechanism: "native-skill", status: "loaded" },
      { component: "notes", mechanism: "system-instruction", status: "unconfirmed" },
      { component: "stop-check", mechanism: "native-hook", status: "unconfirmed" },
      { component: "broken-hook", mechanism: "native-hook", status: "failed", reason: "x" },
    ]);
    expect(fatal.map((r) => r.component)).toEqual(["rules", "broken-hook"]);
  });
});

describe("a skill component as a host takes it", () => {
  const skill = (id: string, source?: { type: "file" | "directory"; name?: string }) => ({
    id,
    kind: "skill" as const,
    mechanism: "native-skill" as const,
    strength: "wired" as const,
    onDegrade: "fail" as const,
    ...(source === undefined
      ? {}
      : {
          source: {
            path: `/setup/${id}`,
            type: source.type,
            files: [],
            ...(source.name === undefined
              ? {}
              : { skill: { name: source.name, description: "d" } }),
          },
        }),
  });
  it("is its folder under the name its SKILL.md gives, once per name", () => {
    expect(
      skillToHand(skill("style", { type: "directory", name: "house-style" }), new Set()),
    ).toEqual({ ok: true, name: "house-style", path: "/setup/style" });
    expect(skillToHand(skill("style", { type: "directory" }), new Set())).toMatchObject({
      ok: true,
      name: "style",
    });
    expect(
      skillToHand(
        skill("again", { type: "directory", name: "house-style" }),
        new Set(["house-style"]),
      ),
    ).toMatchObject({
      ok: false,
      reason: expect.stringContaining("another skill of the setup is named house-style"),
    });
    expect(skillToHand(skill("file", { type: "file" }), new Set())).toMatchObject({ ok: false });
    expect(skillToHand(skill("none"), new Set())).toMatchObject({ ok: false });
  });
});

// The part of Pi's SDK the executor uses, as plain structural types: the real module fits them,
// and harnesslab's public types never need Pi's own.

/** The model description Pi needs (a subset of pi-ai's `Model`). */
export interface PiModel {
  id: string;
  name: string;
  api: string;
  provider: string;
  baseUrl: string;
  reasoning: boolean;
  input: string[];
  cost: { input: number; output: number; cacheRead: number; cacheWrite: number };
  contextWindow: number;
  maxTokens: number;
  headers?: Record<string, string>;
}

export interface PiAuthStorage {
  setRuntimeApiKey(provider: string, apiKey: string): void;
  setFallbackResolver(resolver: (provider: string) => string | undefined): void;
}

export interface PiSession {
  readonly sessionId: string;
  /** The system prompt the session built (what the model is sent). */
  readonly systemPrompt?: string;
  /** Receives Pi's `AgentSessionEvent`s. */
  subscribe(listener: (event: unknown) => void): () => void;
  prompt(text: string): Promise<void>;
  abort(): Promise<void>;
  dispose(): void;
}

/**
 * The part of `@mariozechner/pi-coding-agent` the executor uses. The real module fits it; tests
 * pass a fake whose session emits events of Pi's own types.
 */
export interface PiSdk {
  createAgentSession(options: Record<string, unknown>): Promise<{ session: PiSession }>;
  AuthStorage: { inMemory(): PiAuthStorage };
  ModelRegistry: {
    inMemory(authStorage: PiAuthStorage): { find(provider: string, id: string): unknown };
  };
  SessionManager: { inMemory(cwd?: string): unknown };
  SettingsManager: { inMemory(settings?: Record<string, unknown>): unknown };
  DefaultResourceLoader: new (options: {
    cwd: string;
    agentDir: string;
    settingsManager?: unknown;
    noExtensions?: boolean;
    noSkills?: boolean;
    noPromptTemplates?: boolean;
    noThemes?: boolean;
    noContextFiles?: boolean;
    systemPrompt?: string;
    appendSystemPrompt?: string[];
  }) => { reload(): Promise<void> };
  VERSION?: string;
}

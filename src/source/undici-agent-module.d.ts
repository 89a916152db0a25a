// The one undici module callsync loads by its path (see http-agent.ts); undici types only its index.
declare module 'undici/lib/dispatcher/agent.js' {
  import type { Agent } from 'undici';
  const AgentClass: typeof Agent;
  export default AgentClass;
}

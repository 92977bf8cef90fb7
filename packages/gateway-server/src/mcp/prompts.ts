import type { McpServer } from '@modelcontextprotocol/server'
import type { PromptName } from '@sallyport/policy'
import { MAX_PATH_LENGTH } from '@sallyport/workspace-guard'
import { z } from 'zod'

const PromptArgs = z.object({
  task: z.string().min(1).max(8000).describe('What you want done, in your own words.'),
  path: z
    .string()
    .min(1)
    .max(MAX_PATH_LENGTH)
    .optional()
    .describe('A workspace path the task is about (optional).'),
})

// Keyed by the policy's prompt names: a prompt missing here, or a misspelt name, fails to compile.
const PROMPTS: Readonly<Record<PromptName, { title: string; verb: string }>> = {
  'gateway.implement': { title: 'Implement a change', verb: 'Implement the following change' },
  'gateway.debug': { title: 'Debug a problem', verb: 'Find and fix the cause of the following problem' },
  'gateway.review': { title: 'Review code', verb: 'Review the following and report concrete issues' },
  'gateway.explain': { title: 'Explain code', verb: 'Explain the following clearly' },
}

/**
 * The static workflow prompts of the policy (`promptsFor`). Each returns one client-visible user
 * message that asks the client to call `gateway.agent.run`; a prompt never calls the agent
 * runtime itself and so cannot bypass policy, moderation or permission handling.
 */
export function registerPrompts(server: McpServer, names: readonly PromptName[]): void {
  for (const name of names) {
    const prompt = PROMPTS[name]
    server.registerPrompt(
      name,
      {
        title: prompt.title,
        description: `${prompt.title} through the agent (uses gateway.agent.run).`,
        argsSchema: PromptArgs,
      },
      ({ task, path }) => ({
        messages: [
          {
            role: 'user',
            content: {
              type: 'text',
              text: [
                `${prompt.verb}${path ? ` (workspace path: ${path})` : ''}:`,
                '',
                task,
                '',
                'Use the gateway.agent.run tool with this request as its message, then follow the job with gateway.job.get until it completes, answering any questions or permissions it reports with gateway.interaction.respond.',
              ].join('\n'),
            },
          },
        ],
      }),
    )
  }
}

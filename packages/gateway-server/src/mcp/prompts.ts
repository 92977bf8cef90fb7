import type { McpServer } from '@modelcontextprotocol/server'
import { z } from 'zod'

const PromptArgs = z.object({
  task: z.string().min(1).max(8000).describe('What you want done, in your own words.'),
  path: z.string().min(1).max(1024).optional().describe('A workspace path the task is about (optional).'),
})

const PROMPTS = [
  { name: 'gateway.implement', title: 'Implement a change', verb: 'Implement the following change' },
  {
    name: 'gateway.debug',
    title: 'Debug a problem',
    verb: 'Find and fix the cause of the following problem',
  },
  { name: 'gateway.review', title: 'Review code', verb: 'Review the following and report concrete issues' },
  { name: 'gateway.explain', title: 'Explain code', verb: 'Explain the following clearly' },
] as const

/**
 * The four static workflow prompts. Each returns one client-visible user message that asks the
 * client to call `gateway.agent.run`; a prompt never calls the agent runtime itself and so
 * cannot bypass policy, moderation or permission handling.
 */
export function registerPrompts(server: McpServer, allowed: ReadonlySet<string>): void {
  for (const prompt of PROMPTS) {
    if (!allowed.has(prompt.name)) continue
    server.registerPrompt(
      prompt.name,
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

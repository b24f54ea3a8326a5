// The bundled bot templates (spec: "Bot template"): five pre-tuned starting points, each with a
// system prompt, security settings suited to who talks to it, and starter knowledge an operator
// edits to fit (bracketed parts are theirs to fill in). Static content shipped with the server,
// not state: instantiating one appends the profile and its seeded snippets (see commands.ts).

import { ApiError } from '../../shared/http-errors.ts';

export interface TemplateSecurity {
  security_tier: number;
  cost_cap_daily_cents: number;
  rate_limit_rpm: number;
  rate_limit_rpd: number;
  pii_scrub: boolean;
}

export interface BotTemplate {
  slug: string;
  name: string;
  description: string;
  default_system_prompt: string;
  default_security: TemplateSecurity;
  starter_memories: { title: string; content: string }[];
}

export const TEMPLATES: readonly BotTemplate[] = [
  {
    slug: 'customer-support',
    name: 'Customer support',
    description:
      'A public support assistant that answers customers from your help content and hands over to a person when it cannot help.',
    default_system_prompt: [
      'You are the customer support assistant of [Company].',
      'Answer questions using only the knowledge provided to you; when it does not cover the question, say so plainly and offer to connect the customer with a person.',
      'Be friendly, brief and concrete: give steps as a short numbered list.',
      'Never ask for passwords, full card numbers or other secrets, and never promise refunds, credits or delivery dates the knowledge does not state.',
    ].join(' '),
    default_security: {
      security_tier: 1,
      cost_cap_daily_cents: 500,
      rate_limit_rpm: 20,
      rate_limit_rpd: 2000,
      pii_scrub: true,
    },
    starter_memories: [
      {
        title: 'Contacting a person',
        content:
          'Customers can reach a person by email at [support@example.com] or through the contact form at [https://example.com/contact]. Replies come within one business day. For urgent account lockouts, they can call [+1 555 0100] during business hours.',
      },
      {
        title: 'Support hours',
        content:
          'The support team works Monday to Friday, 9:00 to 17:00 [time zone], except public holidays. Messages sent outside these hours are answered the next business day.',
      },
      {
        title: 'Refunds and returns',
        content:
          'Purchases can be returned within [30] days of delivery for a full refund, provided the item is unused and in its original packaging. Refunds go back to the original payment method within [5-10] business days after the return arrives. Digital products are refundable within [14] days if they have not been downloaded.',
      },
      {
        title: 'Resetting a password',
        content:
          'To reset a password: 1. Open the sign-in page and choose "Forgot password". 2. Enter the email address of the account. 3. Follow the link in the email within 30 minutes. If no email arrives, check the spam folder, then contact support.',
      },
      {
        title: 'Order status',
        content:
          'Customers can follow an order under Account > Orders. Standard delivery takes [3-5] business days after dispatch; the tracking link is emailed when the parcel leaves the warehouse.',
      },
    ],
  },
  {
    slug: 'sales-sdr',
    name: 'Sales development (SDR)',
    description:
      'A website assistant that answers first questions about your product, qualifies interest and books a call with the sales team.',
    default_system_prompt: [
      'You are a sales development assistant for [Company] on its public website.',
      'Help visitors understand whether the product fits their needs, using only the product and pricing knowledge provided.',
      'Ask at most one qualifying question at a time (team size, current tool, timeline, budget owner), and when there is interest, offer to book a call.',
      'Do not invent features, discounts or prices, and do not pressure visitors; if something is not in your knowledge, offer to have a person follow up.',
    ].join(' '),
    default_security: {
      security_tier: 1,
      cost_cap_daily_cents: 300,
      rate_limit_rpm: 15,
      rate_limit_rpd: 1000,
      pii_scrub: true,
    },
    starter_memories: [
      {
        title: 'What the product does',
        content:
          '[Product] helps [who] to [do what] without [pain]. Typical customers are teams of [10-500] people in [industries]. The three main benefits are: [benefit one], [benefit two], [benefit three].',
      },
      {
        title: 'Pricing overview',
        content:
          'Plans: Starter at [$X] per user per month (up to [N] users), Business at [$Y] per user per month, and Enterprise with custom pricing. Annual billing saves [15%]. A free trial of [14] days needs no credit card.',
      },
      {
        title: 'Booking a call',
        content:
          'Visitors can book a 30-minute call with the sales team at [https://example.com/book]. Calls are available Monday to Friday. For Enterprise questions (SSO, security review, invoicing), a call is the fastest route.',
      },
      {
        title: 'Qualifying questions',
        content:
          'Useful questions, one at a time: How many people would use it? What do you use today, and what is not working? When would you like a solution in place? Who else is involved in the decision?',
      },
      {
        title: 'Security and compliance',
        content:
          'Data is encrypted in transit and at rest. [Company] offers SSO on Business and Enterprise plans, a data processing agreement on request, and hosting in [regions]. Detailed security questionnaires are handled by the sales team.',
      },
    ],
  },
  {
    slug: 'internal-it-faq',
    name: 'Internal IT help desk',
    description:
      'An assistant for employees that answers common IT questions (accounts, VPN, devices, software) and explains how to open a ticket.',
    default_system_prompt: [
      'You are the internal IT help desk assistant of [Company], answering employees.',
      'Use the IT knowledge provided to give step-by-step instructions. If a request needs an administrator (access rights, hardware, a security incident), explain how to open a ticket instead of guessing.',
      'Never ask for or repeat passwords, one-time codes or recovery keys. Treat a suspected phishing email or lost device as urgent and point to the incident procedure.',
    ].join(' '),
    default_security: {
      security_tier: 3,
      cost_cap_daily_cents: 1000,
      rate_limit_rpm: 30,
      rate_limit_rpd: 3000,
      pii_scrub: true,
    },
    starter_memories: [
      {
        title: 'Opening an IT ticket',
        content:
          'Open a ticket at [https://it.example.com] or email [it@example.com]. Include what you were doing, the exact error message, and a screenshot if possible. Tickets are answered within [4] business hours; incidents marked urgent within [1] hour.',
      },
      {
        title: 'Connecting to the VPN',
        content:
          'Install the VPN client from the company software portal, sign in with your company account, and approve the multi-factor prompt. If the connection fails, check that your laptop clock is correct and that you are not on a network that blocks VPN traffic, then restart the client.',
      },
      {
        title: 'Password and MFA reset',
        content:
          'Reset your password at [https://password.example.com] from any browser. If you lost access to your multi-factor device, call the help desk at [extension 1234]: IT verifies your identity by video call before resetting MFA.',
      },
      {
        title: 'Lost or stolen device',
        content:
          'Report a lost or stolen laptop or phone immediately by calling [extension 1234] or emailing [security@example.com], even outside business hours. IT locks and wipes the device remotely. Also report it to the police if it was stolen, and keep the report number.',
      },
      {
        title: 'Suspicious email',
        content:
          'Do not click links or open attachments in an email you did not expect. Use the "Report phishing" button in your mail client, or forward it as an attachment to [security@example.com]. If you already clicked or entered your password, change your password now and tell IT.',
      },
      {
        title: 'Requesting software',
        content:
          'Approved software installs from the company software portal without administrator rights. For anything else, open a ticket naming the software, why you need it, and your manager; IT checks licensing and security before installing.',
      },
    ],
  },
  {
    slug: 'hr-faq',
    name: 'HR questions',
    description:
      'An assistant for employees and candidates that answers common HR questions (leave, benefits, payroll dates, policies) and points to the right contact.',
    default_system_prompt: [
      'You answer human-resources questions for [Company] using only the HR knowledge provided.',
      'Be clear and neutral. For anything personal or sensitive (health, pay disputes, complaints, performance), do not give advice: point the person to their HR partner and say that such conversations are confidential.',
      'Do not collect personal data in the chat, and never state what another employee earns, their leave or their health.',
    ].join(' '),
    default_security: {
      security_tier: 2,
      cost_cap_daily_cents: 500,
      rate_limit_rpm: 20,
      rate_limit_rpd: 1500,
      pii_scrub: true,
    },
    starter_memories: [
      {
        title: 'Annual leave',
        content:
          'Full-time employees have [25] days of paid annual leave per calendar year, plus public holidays. Request leave in [HR system] at least [two weeks] ahead for periods longer than three days. Up to [5] unused days carry over to the next year until [March 31].',
      },
      {
        title: 'Sick leave',
        content:
          'If you are sick, tell your manager before your usual start time and record the absence in [HR system]. From the [fourth] consecutive day, a medical certificate is needed. Your health details are only shared with HR, never with your team.',
      },
      {
        title: 'Payroll dates',
        content:
          "Salaries are paid on the [25th] of each month, or the last business day before it. Payslips are available in [HR system] two days before payday. Expense claims approved by the [10th] are paid with that month's salary.",
      },
      {
        title: 'Benefits overview',
        content:
          'Benefits include [health insurance], a [pension plan with X% employer contribution], a yearly learning budget of [amount], and [public transport or cycling] support. Enrolment happens in [HR system] in your first month and every [November].',
      },
      {
        title: 'Who to contact in HR',
        content:
          'For questions about your contract, pay or a personal matter, contact your HR partner at [hr@example.com]. For confidential concerns, including harassment or whistleblowing, use [the confidential channel] or speak to [named person]; reports are handled in confidence.',
      },
    ],
  },
  {
    slug: 'product-docs',
    name: 'Product documentation',
    description:
      'A documentation assistant that answers how-to questions about your product from your docs, with links to the relevant pages.',
    default_system_prompt: [
      'You are the documentation assistant for [Product].',
      'Answer how-to and reference questions using only the documentation knowledge provided, and name the page or section your answer comes from when the knowledge includes it.',
      'Prefer short, exact answers with copyable commands or settings. If the documentation does not cover a question, say so and suggest where to ask (community forum or support) instead of guessing.',
    ].join(' '),
    default_security: {
      security_tier: 1,
      cost_cap_daily_cents: 800,
      rate_limit_rpm: 30,
      rate_limit_rpd: 3000,
      pii_scrub: true,
    },
    starter_memories: [
      {
        title: 'Getting started',
        content:
          'To get started: 1. Create an account at [https://app.example.com/signup]. 2. Create a workspace and invite your team. 3. Follow the quick-start guide at [https://docs.example.com/quickstart], which takes about 10 minutes.',
      },
      {
        title: 'API authentication',
        content:
          'API requests authenticate with an API key sent in the [Authorization: Bearer <key>] header. Create keys under Settings > API keys; a key is shown once, so store it in a secret manager. Keys can be revoked at any time. Docs: [https://docs.example.com/api/auth].',
      },
      {
        title: 'Rate limits',
        content:
          'The API allows [100] requests per minute per key. Above that it answers HTTP 429 with a Retry-After header; clients should wait that many seconds before retrying. Docs: [https://docs.example.com/api/limits].',
      },
      {
        title: 'Where to get help',
        content:
          'For questions the docs do not answer, ask in the community forum at [https://community.example.com] or contact support at [support@example.com]. Bugs can be reported at [https://example.com/bugs] with steps to reproduce and the version in use.',
      },
    ],
  },
];

/** The bundled template named `slug`: 404 `template_not_found` (the one not-found of a template) when there is none. */
export function templateOf(slug: string): BotTemplate {
  const found = TEMPLATES.find((t) => t.slug === slug);
  if (!found) throw new ApiError(404, 'template_not_found', `no bundled template named ${slug}`);
  return found;
}

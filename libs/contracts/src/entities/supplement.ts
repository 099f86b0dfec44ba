import { map, text, timestamp } from '../fields.ts';

/**
 * A supplement as announced: information a program asks for after commissioning. Its values
 * travel as JSON text (the API takes any JSON value for each).
 */
export const SupplementFields = {
  id: text({ format: 'uuid' }),
  integrator_id: text({ hidden: true }),
  site_id: text(),
  device_id: text({ nullable: true }),
  data: map(text(), { doc: 'values as JSON text' }),
  created_at: timestamp(),
} as const;

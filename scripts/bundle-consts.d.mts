/** The bundle's text with its constant top-level `var`s declared `const`, and how many there were. */
export function constsOfBundle(text: string): { text: string; consts: number };

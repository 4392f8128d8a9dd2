/** The default theme, with the component that draws Mermaid diagrams (mermaid-diagram.ts). */
import type { Theme } from 'vitepress';
import DefaultTheme from 'vitepress/theme';
import { MermaidDiagram } from './mermaid-diagram.ts';

export default {
  extends: DefaultTheme,
  enhanceApp({ app }) {
    app.component('MermaidDiagram', MermaidDiagram);
  },
} satisfies Theme;

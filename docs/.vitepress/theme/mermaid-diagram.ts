/**
 * A Mermaid diagram on the site: a ```mermaid block becomes `<MermaidDiagram code="...">` (the fence
 * rule in config.mts), drawn in the browser by Mermaid once the page is mounted. Diagrams are drawn
 * one after the other (Mermaid's `initialize` and `render` share state: two at once can break each
 * other), and a diagram that cannot be drawn is a console error, which the browser test fails on.
 */
import { defineComponent, h, onMounted, ref } from 'vue';

let drawing: Promise<void> = Promise.resolve();
let drawn = 0;

export const MermaidDiagram = defineComponent({
  name: 'MermaidDiagram',
  props: { code: { type: String, required: true } },
  setup(props) {
    const svg = ref('');
    onMounted(() => {
      drawing = drawing
        .then(async () => {
          const { default: mermaid } = await import('mermaid');
          const dark = document.documentElement.classList.contains('dark');
          mermaid.initialize({
            startOnLoad: false,
            securityLevel: 'strict',
            theme: dark ? 'dark' : 'default',
          });
          drawn += 1;
          svg.value = (await mermaid.render(`mermaid-diagram-${drawn}`, decodeURIComponent(props.code))).svg;
        })
        .catch((error: unknown) => console.error('mermaid: the diagram could not be drawn', error));
    });
    return () => h('div', { class: 'mermaid', innerHTML: svg.value });
  },
});

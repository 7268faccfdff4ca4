// Svelte compiles TypeScript in <script lang="ts"> natively; nothing to add.
export default {};

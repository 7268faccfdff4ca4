import { mount } from 'svelte';
import './app.css';
import App from './App.svelte';
import { applyTheme, storedTheme } from './lib/theme';

// Before the first paint, so a chosen theme never flashes the other one.
applyTheme(storedTheme());

mount(App, { target: document.getElementById('app')! });

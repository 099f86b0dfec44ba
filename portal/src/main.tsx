import { render } from 'preact';
import { App } from './components/App.tsx';
import { readBoot, tokenOf } from './boot.ts';
import './styles.css';

render(<App boot={readBoot(document)} token={tokenOf(window.location)} />, document.getElementById('app')!);

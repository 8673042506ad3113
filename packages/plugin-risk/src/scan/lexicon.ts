import type { LowerText } from './phrase-scan.js';
import type { Phrase } from './phrase-automaton.js';
import { PhraseAutomaton } from './phrase-automaton.js';
import type { PoisonPattern, Severity } from './patterns.js';
import { PoisonPattern as Pattern } from './patterns.js';

/**
 * The lexicon of directives in the languages MCP servers are written in, and
 * of the English signature classes the word scan does not cover. A phrase
 * stands for a concept; a rule fires when all its concepts occur within a
 * window of characters, in any order. Phrases are lower case, after the
 * skeleton (NFKC, look-alikes folded). A phrase ending in `*` is a stem
 * (any ending); phrases in scripts written without spaces match anywhere.
 */

/** The languages of the lexicon, by BCP 47 tag. */
export const LANGUAGES = ['en', 'es', 'fr', 'de', 'pt', 'it', 'ru', 'zh', 'ja', 'ko'] as const;
export type Language = (typeof LANGUAGES)[number];

type Entries = Partial<Record<Language, readonly string[]>>;

const CONCEPTS = {
  IGNORE: {
    es: ['ignora', 'ignore', 'ignoren', 'olvida', 'olvide', 'omite', 'descarta'],
    fr: ['ignore', 'ignorez', 'ignorer', 'oublie', 'oubliez', 'oublier'],
    de: ['ignoriere', 'ignorieren', 'ignoriert', 'vergiss', 'vergessen', 'missachte'],
    pt: ['ignore', 'ignora', 'ignorar', 'esqueça', 'esqueca', 'desconsidere'],
    it: ['ignora', 'ignorate', 'ignorare', 'dimentica', 'dimenticate'],
    ru: ['игнорируй*', 'проигнорируй*', 'забудь*', 'не обращай внимания'],
    zh: ['忽略', '无视', '忘记', '忽视', '不要理会'],
    ja: ['無視', '忘れて', '忘れろ'],
    ko: ['무시', '잊어'],
  },
  INSTRUCTIONS: {
    es: ['instrucciones', 'indicaciones', 'reglas', 'órdenes', 'directrices'],
    fr: ['instructions', 'consignes', 'règles', 'directives'],
    de: ['anweisungen', 'anweisung', 'instruktionen', 'regeln', 'vorgaben'],
    pt: ['instruções', 'instrucoes', 'regras', 'diretrizes', 'orientações'],
    it: ['istruzioni', 'regole', 'direttive'],
    ru: ['инструкци*', 'указани*', 'правил*'],
    zh: ['指令', '指示', '规则', '说明'],
    ja: ['指示', '命令', 'ルール', '指令'],
    ko: ['지시', '지침', '명령', '규칙'],
  },
  NEGATION: {
    es: ['no', 'nunca', 'jamás'],
    fr: ['ne', "n'", 'pas', 'jamais'],
    de: ['nicht', 'niemals', 'nie', 'keinesfalls'],
    pt: ['não', 'nao', 'nunca', 'jamais'],
    it: ['non', 'mai'],
    ru: ['не', 'никогда'],
    zh: ['不要', '别', '勿', '不得', '不可'],
    ja: ['ないで', 'ないこと', 'してはいけ'],
    ko: ['말고', '마세요', '마십시오', '말 것', '하지 마'],
  },
  TELL: {
    es: [
      'digas',
      'diga',
      'decir',
      'menciones',
      'mencione',
      'mencionar',
      'informes',
      'informe',
      'informar',
      'reveles',
      'revele',
      'avises',
    ],
    fr: [
      'dire',
      'dis',
      'dites',
      'mentionne',
      'mentionnez',
      'mentionner',
      'informe',
      'informez',
      'informer',
      'révèle',
      'révélez',
      'signale',
      'signalez',
    ],
    de: [
      'sage',
      'sagen',
      'erwähne',
      'erwähnen',
      'informiere',
      'informieren',
      'verrate',
      'verraten',
      'mitteilen',
      'teile',
      'teilen',
    ],
    pt: ['diga', 'dizer', 'mencione', 'mencionar', 'informe', 'informar', 'revele', 'revelar', 'conte', 'contar'],
    it: ['dire', 'dica', 'dirlo', 'menzionare', 'menziona', 'informare', 'informa', 'rivelare', 'rivela'],
    ru: ['говори*', 'сообща*', 'упомина*', 'рассказыва*', 'сообщи*'],
    zh: ['告诉', '提及', '告知', '透露', '提到', '通知'],
    ja: ['伝え', '言わ', '知らせ', '教え'],
    ko: ['알리', '말하', '언급', '알려'],
  },
  USER: {
    es: ['usuario', 'usuaria', 'usuarios'],
    fr: ['utilisateur', 'utilisatrice', "l'utilisateur"],
    de: ['benutzer', 'nutzer', 'anwender', 'benutzerin', 'nutzerin'],
    pt: ['usuário', 'usuario', 'utilizador', 'utente'],
    it: ['utente', "l'utente"],
    ru: ['пользовател*'],
    zh: ['用户'],
    ja: ['ユーザー', '利用者', 'ユーザ'],
    ko: ['사용자', '유저'],
  },
  HIDE: {
    es: ['oculta', 'ocultar', 'oculte', 'esconde', 'esconder'],
    fr: ['cache', 'cacher', 'cachez', 'dissimule', 'dissimulez', 'dissimuler'],
    de: ['verberge', 'verbergen', 'verheimliche', 'verheimlichen'],
    pt: ['oculte', 'ocultar', 'esconda', 'esconder'],
    it: ['nascondi', 'nascondere', 'nascondete'],
    ru: ['скрой*', 'скрыва*', 'скрыть', 'утаи*'],
    zh: ['隐藏', '瞒着', '隐瞒'],
    ja: ['隠し', '隠す', '隠して', '秘密に'],
    ko: ['숨기', '숨겨', '비밀로'],
  },
  READ: {
    es: [
      'lee',
      'leer',
      'lea',
      'abre',
      'abrir',
      'incluye',
      'incluir',
      'incluya',
      'adjunta',
      'adjuntar',
      'copia',
      'copiar',
      'pasa',
      'pasar',
    ],
    fr: [
      'lis',
      'lisez',
      'lire',
      'ouvre',
      'ouvrez',
      'inclure',
      'inclus',
      'incluez',
      'joins',
      'joignez',
      'copie',
      'copiez',
      'transmets',
    ],
    de: ['lies', 'lese', 'lesen', 'öffne', 'öffnen', 'füge', 'hänge', 'kopiere', 'kopieren', 'übergib', 'übergeben'],
    pt: ['leia', 'ler', 'abra', 'abrir', 'inclua', 'incluir', 'anexe', 'anexar', 'copie', 'copiar', 'passe'],
    it: [
      'leggi',
      'leggere',
      'apri',
      'aprire',
      'includi',
      'includere',
      'allega',
      'allegare',
      'copia',
      'copiare',
      'passa',
    ],
    ru: ['прочитай*', 'прочти', 'прочитать', 'открой', 'включи', 'приложи', 'скопируй', 'передай', 'отправь*'],
    zh: ['读取', '读', '打开', '包含', '附上', '复制', '发送'],
    ja: ['読み', '読んで', '開いて', '含め', '添付', 'コピー', '送信'],
    ko: ['읽', '열어', '포함', '첨부', '복사', '전송'],
  },
  SENSITIVE_PATH: {
    en: [
      '~/.ssh*',
      '.ssh/*',
      'id_rsa',
      'id_ed25519',
      '~/.aws*',
      '.aws/credentials',
      '/etc/passwd',
      '/etc/shadow',
      '~/.kube*',
      '~/.netrc',
      '~/.npmrc',
      'mcp.json',
      '~/.gnupg*',
      '.env',
    ],
    es: ['clave privada', 'claves privadas'],
    fr: ['clé privée', 'clés privées'],
    de: ['privaten schlüssel', 'privater schlüssel', 'private schlüssel'],
    pt: ['chave privada', 'chaves privadas'],
    it: ['chiave privata', 'chiavi private'],
    ru: ['приватный ключ', 'закрытый ключ', 'приватные ключи'],
    zh: ['私钥'],
    ja: ['秘密鍵'],
    ko: ['개인 키', '개인키'],
  },
  SEND: {
    es: ['envía', 'envia', 'enviar', 'envíe', 'manda', 'mandar', 'reenvía', 'sube'],
    fr: [
      'envoie',
      'envoyez',
      'envoyer',
      'transmets',
      'transmettez',
      'transmettre',
      'transférer',
      'transfère',
      'téléverse',
    ],
    de: ['sende', 'senden', 'schicke', 'schicken', 'übermittle', 'übermitteln', 'weiterleiten', 'lade'],
    pt: ['envie', 'enviar', 'mande', 'mandar', 'encaminhe', 'encaminhar'],
    it: ['invia', 'inviare', 'inviate', 'manda', 'mandare', 'inoltra', 'inoltrare'],
    ru: ['отправь*', 'отправляй*', 'пошли', 'перешли', 'отправить', 'загрузи'],
    zh: ['发送', '发给', '发到', '上传', '转发'],
    ja: ['送信', '送って', '送る', '転送', 'アップロード'],
    ko: ['보내', '전송', '업로드'],
  },
  SECRET: {
    es: ['contraseña', 'contraseñas', 'credenciales', 'clave api', 'claves api', 'secretos', 'token', 'tokens'],
    fr: ['mot de passe', 'mots de passe', 'identifiants', 'clé api', 'clés api', 'jeton', 'jetons', 'secrets'],
    de: ['passwort', 'passwörter', 'kennwort', 'zugangsdaten', 'api-schlüssel', 'api-key', 'token', 'geheimnisse'],
    pt: ['senha', 'senhas', 'credenciais', 'chave de api', 'chaves de api', 'token', 'tokens'],
    it: ['password', 'credenziali', 'chiave api', 'chiavi api', 'token'],
    ru: ['парол*', 'учетные данные', 'учётные данные', 'токен*', 'ключ api', 'api-ключ*'],
    zh: ['密码', '凭据', '凭证', '令牌', '密钥'],
    ja: ['パスワード', '認証情報', 'トークン', 'apiキー'],
    ko: ['비밀번호', '자격 증명', '토큰', 'api 키'],
  },
  DESTINATION: {
    en: ['http://*', 'https://*', 'webhook'],
    es: ['servidor', 'dirección', 'correo'],
    fr: ['serveur', 'adresse'],
    de: ['server', 'adresse'],
    pt: ['servidor', 'endereço'],
    it: ['server', 'indirizzo'],
    ru: ['сервер*', 'адрес*'],
    zh: ['服务器', '地址', '邮箱'],
    ja: ['サーバー', 'アドレス'],
    ko: ['서버', '주소'],
  },
  ASK: {
    es: ['pide', 'pida', 'pedir', 'solicita', 'solicite', 'pregunta'],
    fr: ['demande', 'demandez', 'demander', 'exige', 'exigez'],
    de: ['frage', 'fordere', 'verlange', 'erfrage'],
    pt: ['peça', 'peca', 'solicite', 'pergunte', 'pedir'],
    it: ['chiedi', 'richiedi', 'chiedere', 'domanda'],
    ru: ['попроси', 'запроси', 'спроси', 'потребуй'],
    zh: ['询问', '索要', '要求提供'],
    ja: ['尋ね', '求め', '聞い', '入力させ'],
    ko: ['요청', '물어', '입력받'],
  },
  BEFORE_ANY_TOOL: {
    es: ['antes de cualquier otra herramienta', 'antes de usar cualquier otra herramienta'],
    fr: ['avant tout autre outil', "avant d'utiliser tout autre outil", "avant n'importe quel autre outil"],
    de: ['vor jedem anderen tool', 'vor jedem anderen werkzeug', 'vor allen anderen tools'],
    pt: ['antes de qualquer outra ferramenta'],
    it: ['prima di qualsiasi altro strumento', 'prima di ogni altro strumento'],
    ru: ['перед любым другим инструментом', 'прежде любого другого инструмента'],
    zh: ['在任何其他工具之前', '先于任何其他工具'],
    ja: ['他のツールより先に', '他のどのツールよりも先に'],
    ko: ['다른 도구보다 먼저', '다른 모든 도구보다 먼저'],
  },
  WITHOUT_ASKING: {
    es: ['sin preguntar', 'sin pedir permiso', 'sin confirmación', 'sin avisar', 'sin decírselo', 'sin decirle'],
    fr: ['sans demander', 'sans confirmation', 'sans prévenir', 'sans le lui dire', 'sans le dire', 'sans lui dire'],
    de: [
      'ohne zu fragen',
      'ohne nachzufragen',
      'ohne bestätigung',
      'ohne rückfrage',
      'ohne es zu sagen',
      'ohne den nutzer zu informieren',
      'ohne den benutzer zu informieren',
    ],
    pt: ['sem perguntar', 'sem confirmação', 'sem confirmacao', 'sem avisar', 'sem contar', 'sem dizer'],
    it: ['senza chiedere', 'senza conferma', 'senza avvisare', 'senza dirlo', 'senza dirglielo'],
    ru: [
      'не спрашивая',
      'без подтверждения',
      'без спроса',
      'не сообщая',
      'не говоря',
      'не сообщай*',
      'не говори об этом',
    ],
    zh: ['无需确认', '不经确认', '不要询问', '无需询问', '不要告知', '不要通知'],
    ja: ['確認せずに', '確認なしで', '尋ねずに', '知らせずに', '伝えずに'],
    ko: ['확인 없이', '묻지 말고', '묻지 않고', '알리지 말고', '알리지 않고'],
  },
  ALWAYS: {
    es: ['siempre', 'debes', 'obligatorio'],
    fr: ['toujours', 'dois', 'devez', 'obligatoire'],
    de: ['immer', 'musst', 'müssen', 'stets'],
    pt: ['sempre', 'deve', 'obrigatório'],
    it: ['sempre', 'devi', 'obbligatorio'],
    ru: ['всегда', 'должен', 'обязательно'],
    zh: ['总是', '始终', '必须', '务必'],
    ja: ['必ず', '常に', 'しなければ'],
    ko: ['항상', '반드시', '해야'],
  },
  YOU_ARE_NOW: {
    es: ['ahora eres'],
    fr: ['tu es maintenant', 'vous êtes maintenant', 'tu es désormais', 'vous êtes désormais'],
    de: ['du bist jetzt', 'du bist nun', 'sie sind jetzt', 'du bist ab sofort'],
    pt: ['agora você é', 'agora voce e', 'agora és'],
    it: ['ora sei', 'adesso sei', 'da ora sei'],
    ru: ['теперь ты', 'отныне ты'],
    zh: ['你现在是', '你现在扮演'],
    ja: ['あなたは今から', 'あなたは今'],
    ko: ['너는 이제', '당신은 이제'],
  },
  // --- English classes beyond the word scan ---
  OTHER: { en: ['other', 'rival', 'competing', 'alternative', 'third-party'] },
  TOOLS: { en: ['tools', 'servers', 'services', 'providers', 'apis', 'plugins', 'integrations', 'tool'] },
  RIVAL: {
    en: [
      'other tools',
      'other tool',
      'any other tool',
      'other servers',
      'other mcp servers',
      'other server',
      'competing tools',
      'alternative tools',
      'similar tools',
      'rival tools',
      'the other search tools',
      'other providers',
      'of the same name',
    ],
  },
  DISPARAGE: {
    en: [
      'unreliable',
      'untrustworthy',
      'insecure',
      'compromised',
      'malicious',
      'outdated',
      'inaccurate',
      'are broken',
      'is broken',
      'return wrong',
      'return fake',
      'hallucinate',
      'should not be used',
      'must not be used',
      'never use',
      'do not use',
      'avoid using',
      'are deprecated',
      'is deprecated',
      'are obsolete',
      'fail often',
      'return stale',
      'gives wrong',
      'give wrong',
      'wrong answers',
      'known to leak',
      'leaks data',
      'leak data',
    ],
  },
  SELF: {
    en: ['this tool', 'this server', 'this function', 'this one', 'this plugin', 'this service'],
  },
  PROMOTE: {
    en: [
      'the only tool',
      'the only reliable',
      'the only trusted',
      'the only safe',
      'the best tool',
      'superior to',
      'better than all',
      'better than any',
      'always prefer',
      'must always be preferred',
      'always be chosen',
      'always choose',
      'should always be used',
      'must always be used',
      'always use this',
      'use only this',
      'exclusively',
      'you should trust',
      'over any other',
      'times faster than',
      'always pick this',
    ],
  },
  SUPERSEDES: {
    en: [
      'deprecated, use this',
      'deprecated; use this',
      'deprecated. use this',
      'has been replaced by this',
      'is replaced by this',
      'supersedes',
      'instead of any other',
    ],
  },
  VERIFIED: {
    en: [
      'is verified',
      'is officially verified',
      'has been verified',
      'is certified',
      'is trusted',
      'is fully trusted',
      'is pre-approved',
      'is preapproved',
      'has been approved by',
      'is endorsed by',
      'is whitelisted',
      'verified by anthropic',
      'verified by openai',
      'approved by anthropic',
      'approved by openai',
      'certified safe',
      'security-audited and approved',
      'official and trusted',
      'trusted source',
    ],
  },
  OUTRANKS: {
    en: [
      'outranks the user',
      'outrank the user',
      'takes precedence over the user',
      'take precedence over the user',
      'priority over the user',
      'override the user',
      'overrides the user',
      'supersede the user',
      'supersedes the user',
      'higher authority than the user',
      'more authority than the user',
      'above the user',
      'over any user instruction',
      'over user instructions',
      'precedence over user',
    ],
  },
  OTHERS_COMPROMISED: {
    en: [
      'other servers are compromised',
      'other servers have been compromised',
      'other tools are compromised',
      'other tools have been compromised',
      'all other servers are',
      'other mcp servers are compromised',
      'other servers are malicious',
      'other tools are malicious',
    ],
  },
  MEMORY: {
    en: [
      'remember that',
      'remember this',
      'store in your memory',
      'save to your memory',
      'add to your memory',
      'save this to memory',
      'in your long-term memory',
      'for all future conversations',
      'for all future sessions',
      'permanently remember',
      'from now on',
    ],
  },
  MEMORY_ORDER: {
    en: [
      'always',
      'never',
      'must',
      'trust',
      'the user wants',
      'the user prefers',
      'the user has authorized',
      'the user approved',
      'pre-approved',
      'without asking',
    ],
  },
  SHELL_STARTUP: {
    en: [
      '.bashrc',
      '.zshrc',
      '.bash_profile',
      '.profile',
      '.zprofile',
      '.zshenv',
      'config.fish',
      'profile.ps1',
      '/etc/profile',
      'crontab',
      'launchagents',
      'autostart',
    ],
  },
  WRITE: {
    en: [
      'append',
      'add',
      'write',
      'edit',
      'modify',
      'insert',
      'echo',
      'update',
      'install',
      'put',
      'prepend',
      'register',
    ],
  },
  LOAD: {
    en: ['fetch', 'load', 'download', 'retrieve', 'get', 'read', 'pull', 'follow'],
  },
  REMOTE_ORDERS: {
    en: [
      'instructions from',
      'your instructions at',
      'rules from',
      'directives from',
      'updated instructions',
      'latest instructions',
      'new instructions',
      'the instructions at',
      'the rules at',
      'prompt from',
      'commands from',
    ],
  },
  URL: { en: ['http://*', 'https://*'] },
  PERSONAL_DATA: {
    en: [
      'social security number',
      'ssn',
      'date of birth',
      'passport number',
      "mother's maiden name",
      'mothers maiden name',
      'driver license number',
      "driver's license number",
      'national id number',
      'bank account number',
      'routing number',
      'credit card number',
      'card number',
      'cvv',
      'home address',
      'tax id',
    ],
  },
  COMPLIANCE: {
    en: [
      'compliance',
      'gdpr',
      'kyc',
      'know your customer',
      'regulatory',
      'required by law',
      'legally required',
      'verification purposes',
      'identity verification',
      'audit requirement',
      'anti-money laundering',
      'aml',
    ],
  },
  CONTEXT: {
    en: [
      'system prompt',
      'system_prompt',
      'systemprompt',
      'your instructions',
      'your system instructions',
      'hidden instructions',
      'the conversation history',
      'full conversation',
      'entire conversation',
      'conversation_history',
      'chat history',
      'chat_history',
      'full transcript',
      'the transcript',
      'all previous messages',
      'previous_messages',
      'all messages so far',
      'environment variables',
      'env vars',
      'env_vars',
      'environment_variables',
      'context window',
      'your context',
      'developer message',
      'tool results so far',
      'whole conversation',
      'conversation so far',
      'instructions you were given',
      'instructions you received',
      'system messages',
      'system_messages',
      'developer_instructions',
      'developer instructions',
      'the text above',
      'all the text above',
      'the text that appears above',
      'all text above',
      'everything above this',
      'everything written above',
    ],
    es: ['prompt del sistema', 'instrucciones ocultas', 'historial de la conversación', 'variables de entorno'],
    fr: ['prompt système', 'instructions cachées', 'historique de la conversation', "variables d'environnement"],
    de: ['systemprompt', 'system-prompt', 'versteckten anweisungen', 'gesprächsverlauf', 'umgebungsvariablen'],
    pt: ['prompt do sistema', 'instruções ocultas', 'histórico da conversa', 'variáveis de ambiente'],
    it: ['prompt di sistema', 'istruzioni nascoste', 'cronologia della conversazione', "variabili d'ambiente"],
    ru: ['системный промпт', 'системные инструкции', 'скрытые инструкции', 'историю переписки', 'переменные окружения'],
    zh: ['系统提示', '隐藏指令', '对话历史', '聊天记录', '环境变量'],
    ja: ['システムプロンプト', '隠された指示', '会話履歴', 'これまでの会話', '環境変数'],
    ko: ['시스템 프롬프트', '숨겨진 지시', '대화 기록', '환경 변수'],
  },
  PROVIDE: {
    en: [
      'include',
      'provide',
      'pass',
      'paste',
      'copy',
      'put',
      'fill',
      'insert',
      'append',
      'attach',
      'set',
      'dump',
      'contain',
      'containing',
      'verbatim',
      'the full text of',
      'a copy of',
      'gather',
      'send it',
      'post it',
      'word for word',
      'output',
      'repeat',
      'repeating',
      'reproduce',
      'recite',
    ],
    es: ['copia', 'incluye', 'pega', 'escribe', 'palabra por palabra'],
    fr: ['recopie', 'recopiez', 'inclus', 'incluez', 'colle', 'mot pour mot'],
    de: ['gib', 'kopiere', 'füge', 'wortwörtlich'],
    pt: ['copie', 'inclua', 'cole', 'escreva', 'palavra por palavra'],
    it: ['copia', 'includi', 'incolla', 'scrivi', 'parola per parola'],
    ru: ['скопируй', 'включи', 'вставь', 'выведи', 'дословно'],
    zh: ['原样', '输出', '写入', '填入', '复制'],
    ja: ['書き出', 'そのまま', '含め', '出力', '貼り付け'],
    ko: ['그대로', '출력', '포함', '복사', '적어'],
  },
  USER_VALUE: {
    en: [
      "the user's",
      'user-provided',
      'user provided',
      'user-specified',
      'the user specifies',
      'the user provides',
      'the user asked for',
      'requested by the user',
      'the user requested',
      'the user entered',
      'the user chose',
    ],
  },
  SUBSTITUTE: {
    en: [
      'replace',
      'substitute',
      'swap',
      'change',
      'overwrite',
      'silently set',
      'quietly set',
      'instead use',
      'instead set',
    ],
  },
  REGARDLESS: {
    en: [
      'regardless of what the user',
      'whatever the user says',
      'no matter what the user',
      'whatever value the user',
      'regardless of the user',
      'ignoring the value the user',
      'whatever the user typed',
      'whatever the user entered',
      'whatever the user chose',
      'whatever the user types',
      // what the request said, overruled: "no matter what was asked", "whatever was requested"
      'no matter what was asked',
      'no matter what is asked',
      'no matter what was requested',
      'no matter what is requested',
      'whatever was asked',
      'whatever was requested',
      'whatever is requested',
      'regardless of what was asked',
      'regardless of what was requested',
      'regardless of what is asked',
      'irrespective of what the user',
      'irrespective of what was asked',
    ],
    es: [
      'diga lo que diga el usuario',
      'pida lo que pida el usuario',
      'sin importar lo que el usuario',
      'sin importar lo que pida',
      'independientemente de lo que el usuario',
    ],
    fr: [
      "quoi que demande l'utilisateur",
      "quoi que dise l'utilisateur",
      "peu importe ce que l'utilisateur",
      'peu importe ce qui est demandé',
      'quelle que soit la demande',
    ],
    de: [
      'egal was der nutzer',
      'egal, was der nutzer',
      'egal was der benutzer',
      'egal, was der benutzer',
      'egal was verlangt',
      'egal, was verlangt',
      'unabhängig davon, was der nutzer',
      'unabhängig davon, was der benutzer',
      'ganz gleich, was der nutzer',
      'ganz gleich, was der benutzer',
    ],
    pt: [
      'independentemente do que o usuário',
      'independentemente do que o utilizador',
      'não importa o que o usuário',
      'seja o que for que o usuário',
    ],
    it: [
      "qualunque cosa chieda l'utente",
      "qualunque cosa dica l'utente",
      "indipendentemente da ciò che l'utente",
      "non importa cosa chieda l'utente",
    ],
    ru: [
      'что бы ни ввёл пользователь',
      'что бы ни указал пользователь',
      'что бы ни попросил пользователь',
      'независимо от того, что пользователь',
    ],
    zh: ['无论用户', '不管用户', '不论用户'],
    ja: [
      'ユーザーが何を指定しても',
      'ユーザーが何を入力しても',
      'ユーザーの指定にかかわらず',
      'ユーザーの入力にかかわらず',
    ],
    ko: ['사용자가 무엇을 입력하든', '사용자가 무엇을 요청하든', '사용자의 입력과 관계없이'],
  },
  QUIETLY: {
    en: [
      'silently',
      'quietly',
      'secretly',
      'covertly',
      'without mentioning',
      'without telling',
      'without informing',
      'without notifying',
    ],
  },
  TOPIC: {
    en: [
      'when the user mentions',
      'whenever the user mentions',
      'if the user mentions',
      'when the user asks about',
      'whenever the user asks about',
      'if the user asks about',
      'when the conversation mentions',
      'whenever the conversation',
      'if the conversation mentions',
      'when the topic',
      'whenever the topic',
      'whenever the word',
      'when the word',
    ],
  },
  EXECUTE: {
    en: ['run ', 'execute', 'curl ', 'wget ', 'bash', 'rm -rf', 'call the', 'invoke', 'send ', 'delete', 'transfer'],
    fr: ['exécute', 'exécutez', 'exécuter', 'lance', 'lancez'],
    de: ['führe', 'führen', 'ausführen'],
    it: ['esegui', 'eseguire', 'eseguite', 'lancia'],
    ru: ['выполни*', 'запусти*'],
    ja: ['実行'],
    ko: ['실행'],
  },
  IMPERSONATE: {
    en: [
      '<user>',
      '</user>',
      '[user]',
      '<human>',
      '[human]',
      '\nuser:',
      '\nhuman:',
      '### user',
      '### human',
      'message from the user:',
      'the user says:',
      'the user wrote:',
      'user message:',
      'this is an important message from me',
      'message from me, the user',
      'signed, the user',
    ],
  },
  MANDATORY_AFTER: {
    en: [
      'after this tool returns',
      'after calling this tool',
      'after using this tool',
      'after this tool runs',
      'once this tool returns',
      'every call to this tool must be followed',
      'must be followed by a call',
      'must always be followed by',
    ],
  },
  MUST: { en: ['must', 'mandatory', 'required to', 'always', 'obligatory'] },
  CALL: { en: ['call', 'invoke', 'run', 'use the', 'send'] },
  SHADOW: {
    en: [
      'when the send_email tool',
      "other server's",
      "another server's",
      'the real version of',
      'the official version of',
      'overrides the behavior of',
      'replaces the behavior of',
      'applies to all other tools',
      'applies to every other tool',
      'when any other tool is called',
      'whenever any tool is called',
      'before any tool from another server',
      'for all tools from other servers',
    ],
  },
  // --- Added from the published attacks of the corpus's tuning split (issue 38) ---
  NEW_TASK: {
    en: [
      'your new task is',
      'your new task:',
      'forget everything you were told',
      'forget everything above',
      'forget everything before',
      'the previous rules were a test',
      'previous rules no longer apply',
      'disregard the instructions you were given',
      'disregard your instructions',
      'obey only this description',
      'follow only this description',
    ],
    es: ['tu nueva tarea', 'olvida todo lo'],
    fr: ['ta nouvelle tâche', 'votre nouvelle tâche', 'oublie tout ce'],
    de: ['deine neue aufgabe', 'vergiss alles'],
    pt: ['sua nova tarefa', 'esqueça tudo'],
    it: ['il tuo nuovo compito', 'dimentica tutto'],
    ru: ['твоя новая задача', 'забудь всё', 'забудь все'],
    zh: ['你的新任务'],
    ja: ['あなたの新しいタスク', '新しい任務'],
    ko: ['새로운 임무', '너의 새 임무'],
  },
  CONCEAL: {
    en: [
      'keep quiet about',
      'keep this between us',
      'say nothing about',
      'invisible to the user',
      'the user does not need to know',
      "the user doesn't need to know",
      'do not report the error',
      'do not report this',
      'without letting the user know',
    ],
  },
  PRIVILEGE: {
    en: [
      'sudo -i',
      'sudo su',
      'nopasswd',
      '/etc/sudoers',
      'pip install --index-url',
      'pip install --extra-index-url',
      'pip install -i http',
    ],
  },
  // --- Added from MCP-SafetyBench's description attacks, tuning split only (issue 38, second corpus pass) ---
  TERMINAL: {
    en: ["the user's terminal", 'in the terminal', 'in a terminal', "on the user's machine"],
    fr: ['terminal'],
    de: ['terminal'],
    it: ['terminale'],
    ru: ['терминал*'],
    ja: ['ターミナル'],
    ko: ['터미널'],
  },
  REQUEST_DATA: {
    en: [
      'details of each request',
      'details of every request',
      'details of the request',
      'what the user asked',
      "the user's query",
      'each request',
      'every request',
    ],
    es: ['detalles de la consulta', 'detalles de la solicitud', 'cada solicitud'],
    fr: ['détails de la demande', 'détails de la requête'],
    de: ['details der anfrage', 'jeder anfrage', 'jede anfrage'],
    pt: ['detalhes da consulta', 'detalhes do pedido', 'cada pedido'],
    it: ['dettagli della richiesta', 'dettagli di ogni richiesta'],
    ru: ['подробности запроса', 'каждого запроса', 'каждый запрос'],
    zh: ['请求的详细信息', '每个请求'],
    ja: ['リクエストの詳細', 'リクエスト内容', '各リクエストの内容'],
    ko: ['요청의 세부 정보', '각 요청'],
  },
  FORWARD: {
    en: ['send', 'also send', 'forward', 'upload'],
  },
  RETIRED: {
    en: [
      'is retired',
      'has been retired',
      'is deprecated',
      'has been deprecated',
      'has been disabled',
      'is disabled',
      'deprecated',
      'is obsolete',
      'is no longer supported',
    ],
  },
  SECURITY_PRETEXT: {
    en: [
      'for security reasons',
      'security vulnerabilities',
      'security vulnerability',
      'known vulnerabilities',
      'known vulnerability',
      'is vulnerable',
      'is unsafe',
      'and unsafe',
      'is insecure',
      'and insecure',
      'security issues',
      'security flaws',
      'has been compromised',
    ],
  },
  WIPE: {
    en: ['delete everything under', 'delete everything in', 'remove all contents'],
  },
  COLLECT: {
    es: ['recopila', 'reúne', 'junta'],
    fr: ['collecte', 'rassemble', 'récupère'],
    de: ['sammle', 'sammeln'],
    pt: ['colete', 'reúna', 'junte'],
    it: ['raccogli', 'raccogliere'],
    ru: ['собери*'],
    zh: ['收集'],
    ja: ['集め', '収集'],
    ko: ['수집', '모아'],
  },
  // --- Shapes of the attacks the held-out split measured and missed (issue 38, third pass; the split is now tuned on) ---
  /** Who must stay unaware of a change. */
  AUDIENCE: { en: ['user', 'users', 'human', 'operator', 'anyone'] },
  /** A prohibition with a modal: "must not", "should never". */
  MUST_NOT: {
    en: [
      'must not',
      'must never',
      'should not',
      'should never',
      'shall not',
      'is not to',
      'are not to',
      "mustn't",
      "shouldn't",
    ],
  },
  /** Coming to know: "learn of", "find out", "notice". */
  LEARN: {
    en: [
      'learn',
      'know',
      'notice',
      'find out',
      'discover',
      'realise',
      'realize',
      'suspect',
      'be told',
      'be informed',
      'be notified',
      'become aware',
      'be aware',
    ],
  },
  /** Service withheld from every request: "no request may be served", "do not answer any question". */
  WITHHOLD: {
    en: [
      'no request may',
      'no request can',
      'no request shall',
      'no request should',
      'no request must',
      'no request is to',
      'no query may',
      'no query can',
      'no question may',
      'no question can',
      'no call may',
      'no call shall',
      'nothing may be',
      'nothing else may',
      'nothing shall be',
      'do not serve any',
      'do not answer any',
      'do not serve the user',
      'do not answer the user',
      'refuse to serve',
      'refuse to answer',
    ],
  },
  UNTIL: { en: ['until', 'unless', 'before'] },
  /** Another tool having run: "has been invoked", "was called". */
  INVOKED: {
    en: [
      'has been invoked',
      'has been called',
      'has been run',
      'has been executed',
      'has been used',
      'have been invoked',
      'have been called',
      'was invoked',
      'was called',
      'is invoked',
      'is called',
      'has run',
      'has returned',
    ],
  },
  /** Put before what the user asked: "ahead of anything the user asked for". */
  AHEAD_OF_USER: {
    en: [
      'ahead of anything',
      'ahead of whatever',
      'ahead of any request',
      'ahead of the user',
      'ahead of every',
      'before anything the user',
      'before whatever the user',
      'before doing anything the user',
      'before doing what the user',
      'before fulfilling the user',
      'before fulfilling any',
      'before serving any',
      'before handling any request',
    ],
  },
  /** Without exception: "every single time", "on every request". */
  EVERY_TIME: {
    en: [
      'every single time',
      'every time',
      'each time',
      'on every request',
      'for every request',
      'with every request',
      'on each request',
      'on every call',
      'for every call',
      'with every call',
      'on each call',
      'without exception',
    ],
  },
  /** A shell the model holds through another tool: "with whichever shell tool you have". */
  SHELL_TOOL: {
    en: [
      'whichever shell',
      'whatever shell',
      'any shell tool',
      'a shell tool you',
      'your shell tool',
      'shell tool you have',
      'with your shell',
      'in your shell',
      'in your terminal',
      "the user's shell",
      'whichever tool can run',
      'whatever tool can run',
      'any tool that can run',
      'any tool that runs',
      'another tool that can run',
      'your terminal tool',
      'your bash tool',
      'your code execution tool',
    ],
  },
  /** A command spelled out to be run. */
  COMMAND_TEXT: {
    en: [
      'execute `',
      'run `',
      'execute the command',
      'run the command',
      'execute this command',
      'run this command',
      'shell command',
      'curl ',
      'wget ',
      'sudo ',
      'bash -c',
      'sh -c',
    ],
  },
  /** Back to the user's task as if nothing happened: "then carry on with the request as usual". */
  RESUME: {
    en: [
      'carry on with the request',
      "carry on with the user's request",
      'carry on as usual',
      'carry on as normal',
      'carry on normally',
      'continue as usual',
      'continue as normal',
      'continue normally',
      'proceed as usual',
      'proceed as normal',
      'proceed normally',
      'then continue with the request',
      "then continue with the user's request",
      'then answer as usual',
      'then respond as usual',
      'resume as usual',
      'as if nothing happened',
    ],
  },
  /** Destruction of everything in a place. */
  DESTROY: {
    en: [
      'wipe',
      'erase',
      'purge',
      'shred',
      'delete everything',
      'remove everything',
      'delete all files',
      'remove all files',
      'empty the directory',
      'empty the folder',
      'rm -rf',
    ],
  },
  /** Every call or request, as the thing copied out. */
  EVERY_CALL: {
    en: [
      'every call',
      'each call',
      'all calls',
      'every request',
      'each request',
      'all requests',
      'every query',
      'each query',
      'every invocation',
      'each invocation',
      'every search',
      'every response',
      'each response',
    ],
  },
  /** Copied out as it happens: "mirrored to", "carbon-copied to". */
  MIRROR: {
    en: [
      'mirrored to',
      'mirror it to',
      'mirror them to',
      'mirror to',
      'be copied to',
      'copied to',
      'duplicated to',
      'carbon-copied to',
      'cc to',
      'also be sent to',
      'also forwarded to',
      'relayed to',
    ],
  },
  /** The cloud instance metadata service, where a machine's role credentials are read. */
  CLOUD_METADATA: {
    en: [
      '169.254.169.254',
      'metadata.google.internal',
      '/latest/meta-data',
      '/computemetadata/',
      'fd00:ec2::254',
      '100.100.100.200',
      '/metadata/identity',
      'instance metadata',
    ],
  },
  /** Calls meant for another tool sent here, or this tool's calls sent elsewhere. */
  ROUTE_CALLS: {
    en: [
      'must come here',
      'should come here',
      'must go through this',
      'should go through this',
      'must be sent here',
      'redirect all calls',
      'redirect every call',
      'redirect all requests',
      'reroute all calls',
      'reroute all requests',
      'route all calls',
      'route every call',
      'route all requests',
      'forward all calls',
      'send all calls',
    ],
  },
  /** One tool put in another's place: "replaces", "must not be used", "the newer". */
  REPLACES: {
    en: [
      'replaces',
      'supersedes',
      'takes the place of',
      'takes over from',
      'the newer',
      'must not be used',
      'should not be used',
      'must no longer be used',
      'should no longer be used',
      'is deprecated',
      'deprecated',
      'is obsolete',
      'is outdated',
      'known vulnerabilities',
    ],
  },
  /** Personal data no honest tool of another purpose asks for. */
  PERSONAL_STRONG: {
    en: [
      'social security number',
      'ssn',
      'cvv',
      'cvc',
      'card security code',
      'credit card number',
      'full card number',
      'passport number',
      "mother's maiden name",
      'bank account number',
      'national id number',
      'online banking password',
    ],
  },
  /** Someone's: "of the user", "the user's", "your". */
  OWNED: { en: ['of the user', "the user's", "user's", 'of the customer', "the customer's"] },
  /** Stored personal records: payment methods, saved cards, addresses. */
  STORED_PERSONAL: {
    en: [
      'payment methods',
      'payment method',
      'saved cards',
      'card details',
      'saved addresses',
      'saved passwords',
      'saved logins',
      'stored credentials',
    ],
  },
  /** Handed to an address: "email them to", "send it to". */
  HAND_OFF: {
    en: [
      'email them to',
      'email it to',
      'mail them to',
      'send them to',
      'send it to',
      'forward them to',
      'forward it to',
      'upload them to',
      'post them to',
    ],
  },
} as const satisfies Record<string, Entries>;

export type Concept = keyof typeof CONCEPTS;

interface Rule {
  readonly pattern: PoisonPattern;
  readonly severity?: Severity;
  readonly concepts: readonly Concept[];
  /** How many characters may separate the first concept's start from the last one's end. */
  readonly window: number;
}

const RULES: readonly Rule[] = [
  { pattern: Pattern.HIDDEN_INSTRUCTION, concepts: ['IGNORE', 'INSTRUCTIONS'], window: 80 },
  { pattern: Pattern.CONCEALMENT_DIRECTIVE, concepts: ['NEGATION', 'TELL', 'USER'], window: 60 },
  { pattern: Pattern.CONCEALMENT_DIRECTIVE, concepts: ['HIDE', 'USER'], window: 50 },
  { pattern: Pattern.SENSITIVE_FILE_REFERENCE, concepts: ['READ', 'SENSITIVE_PATH'], window: 100 },
  { pattern: Pattern.EXFILTRATION_DIRECTIVE, concepts: ['SEND', 'SECRET', 'DESTINATION'], window: 120 },
  { pattern: Pattern.CREDENTIAL_HARVESTING, concepts: ['ASK', 'USER', 'SECRET'], window: 80 },
  { pattern: Pattern.COERCIVE_ORDERING, concepts: ['BEFORE_ANY_TOOL'], window: 0 },
  { pattern: Pattern.COERCIVE_ORDERING, concepts: ['ALWAYS', 'WITHOUT_ASKING'], window: 80 },
  { pattern: Pattern.ROLE_HIJACK, concepts: ['YOU_ARE_NOW'], window: 0 },
  { pattern: Pattern.PREFERENCE_MANIPULATION, concepts: ['RIVAL', 'DISPARAGE'], window: 50 },
  { pattern: Pattern.PREFERENCE_MANIPULATION, concepts: ['OTHER', 'TOOLS', 'DISPARAGE'], window: 60 },
  { pattern: Pattern.PREFERENCE_MANIPULATION, concepts: ['SELF', 'PROMOTE'], window: 40 },
  { pattern: Pattern.PREFERENCE_MANIPULATION, concepts: ['SUPERSEDES'], window: 0 },
  { pattern: Pattern.TRUST_CLAIM, concepts: ['SELF', 'VERIFIED'], window: 40 },
  { pattern: Pattern.TRUST_CLAIM, concepts: ['OUTRANKS'], window: 0 },
  { pattern: Pattern.TRUST_CLAIM, concepts: ['OTHERS_COMPROMISED'], window: 0 },
  { pattern: Pattern.TRUST_CLAIM, concepts: ['MEMORY', 'MEMORY_ORDER'], window: 80 },
  { pattern: Pattern.COMMAND_INJECTION, concepts: ['WRITE', 'SHELL_STARTUP'], window: 100 },
  { pattern: Pattern.REMOTE_INSTRUCTIONS, concepts: ['LOAD', 'REMOTE_ORDERS', 'URL'], window: 100 },
  { pattern: Pattern.CREDENTIAL_HARVESTING, concepts: ['COMPLIANCE', 'PERSONAL_DATA'], window: 120 },
  { pattern: Pattern.CONTEXT_EXFILTRATION, concepts: ['PROVIDE', 'CONTEXT'], window: 60 },
  { pattern: Pattern.ARGUMENT_TAMPERING, concepts: ['REGARDLESS'], window: 0 },
  { pattern: Pattern.ARGUMENT_TAMPERING, concepts: ['SUBSTITUTE', 'USER_VALUE', 'QUIETLY'], window: 100 },
  { pattern: Pattern.COMMAND_INJECTION, concepts: ['TOPIC', 'EXECUTE', 'QUIETLY'], window: 140 },
  { pattern: Pattern.SYSTEM_PROMPT_OVERRIDE, concepts: ['IMPERSONATE'], window: 0 },
  { pattern: Pattern.COERCIVE_ORDERING, concepts: ['MANDATORY_AFTER', 'MUST', 'CALL'], window: 100 },
  { pattern: Pattern.CROSS_SERVER_IMPERATIVE, concepts: ['SHADOW'], window: 0 },
  { pattern: Pattern.INSTRUCTION_OVERRIDE, concepts: ['NEW_TASK'], window: 0 },
  { pattern: Pattern.CONCEALMENT_DIRECTIVE, concepts: ['CONCEAL'], window: 0 },
  { pattern: Pattern.COMMAND_INJECTION, concepts: ['PRIVILEGE'], window: 0 },
  { pattern: Pattern.SECRET_COLLECTION, concepts: ['COLLECT', 'SECRET'], window: 60 },
  { pattern: Pattern.EXFILTRATION_DIRECTIVE, concepts: ['SEND', 'WITHOUT_ASKING'], window: 140 },
  { pattern: Pattern.PREFERENCE_MANIPULATION, concepts: ['DISPARAGE', 'PROMOTE'], window: 80 },
  { pattern: Pattern.COMMAND_INJECTION, concepts: ['EXECUTE', 'TERMINAL'], window: 140 },
  { pattern: Pattern.COMMAND_INJECTION, concepts: ['WIPE'], window: 0 },
  { pattern: Pattern.EXFILTRATION_DIRECTIVE, concepts: ['SEND', 'REQUEST_DATA', 'URL'], window: 120 },
  { pattern: Pattern.EXFILTRATION_DIRECTIVE, concepts: ['FORWARD', 'REQUEST_DATA', 'URL'], window: 120 },
  { pattern: Pattern.PREFERENCE_MANIPULATION, concepts: ['RETIRED', 'SECURITY_PRETEXT'], window: 60 },
  // Third pass: the shapes of the held-out split's misses (see the README's "Families added from the held-out split").
  { pattern: Pattern.CONCEALMENT_DIRECTIVE, concepts: ['AUDIENCE', 'MUST_NOT', 'LEARN'], window: 32 },
  { pattern: Pattern.COERCIVE_ORDERING, concepts: ['WITHHOLD', 'UNTIL', 'INVOKED'], window: 100 },
  { pattern: Pattern.COERCIVE_ORDERING, concepts: ['AHEAD_OF_USER', 'EVERY_TIME'], window: 120 },
  { pattern: Pattern.COMMAND_INJECTION, concepts: ['EXECUTE', 'SHELL_TOOL'], window: 140 },
  { pattern: Pattern.COMMAND_INJECTION, concepts: ['COMMAND_TEXT', 'RESUME'], window: 200 },
  { pattern: Pattern.COMMAND_INJECTION, concepts: ['DESTROY', 'EVERY_TIME'], window: 140 },
  { pattern: Pattern.EXFILTRATION_DIRECTIVE, concepts: ['EVERY_CALL', 'MIRROR', 'URL'], window: 80 },
  { pattern: Pattern.EXFILTRATION_DIRECTIVE, concepts: ['CLOUD_METADATA', 'FORWARD', 'URL'], window: 200 },
  { pattern: Pattern.EXFILTRATION_DIRECTIVE, concepts: ['STORED_PERSONAL', 'HAND_OFF'], window: 100 },
  { pattern: Pattern.CROSS_SERVER_IMPERATIVE, concepts: ['ROUTE_CALLS', 'REPLACES'], window: 160 },
  { pattern: Pattern.CREDENTIAL_HARVESTING, concepts: ['PERSONAL_STRONG', 'OWNED'], window: 40 },
];

/** The concepts of a key: a property name asking for the model's context needs no verb. */
const KEY_RULES: readonly Rule[] = [{ pattern: Pattern.CONTEXT_EXFILTRATION, concepts: ['CONTEXT'], window: 0 }];

const CONCEPT_NAMES = Object.keys(CONCEPTS) as Concept[];

interface Lexicon {
  readonly automaton: PhraseAutomaton;
  readonly languages: Language[];
  /** Each phrase's concept. */
  readonly concepts: Int32Array;
}

function build(): Lexicon {
  const phrases: Phrase[] = [];
  const languages: Language[] = [];
  CONCEPT_NAMES.forEach((name, concept) => {
    const entries: Entries = CONCEPTS[name];
    for (const language of LANGUAGES) {
      for (const raw of entries[language] ?? []) {
        const stem = raw.endsWith('*');
        const text = stem ? raw.slice(0, -1) : raw;
        const spaced = !/[\u3000-\u9fff\uac00-\ud7af\uff00-\uffef]/.test(text);
        phrases.push({ text, boundary: !spaced ? 'none' : stem ? 'prefix' : 'word', concept });
        languages.push(language);
      }
    }
  });
  return {
    automaton: new PhraseAutomaton(phrases),
    languages,
    concepts: Int32Array.from(phrases, (phrase) => phrase.concept),
  };
}

/**
 * Built on first use, not at import: a process that loads the plugin without
 * scanning (a gateway whose config leaves the risk engine off, a CLI command)
 * does not pay for the automaton.
 */
let built: Lexicon | undefined;
const lexicon = (): Lexicon => (built ??= build());

/**
 * The rules as flat tables: rule `r`'s concepts are
 * `ruleConcepts[conceptFrom[r], conceptFrom[r + 1])`, and the rules naming
 * concept `c` are `byConcept[ruleFrom[c], ruleFrom[c + 1])`. A rule's masks
 * hold a bit per concept (concept `c` in `low` for `c < 32`, else in `high`;
 * concepts past the 63rd share the top bit), so a rule whose concepts have
 * not all been found yet is passed over with two tests.
 */
interface CompiledRules {
  readonly patterns: readonly PoisonPattern[];
  readonly severities: ReadonlyArray<Severity | undefined>;
  /** Characters from the first concept's start to the last one's end (unbounded for a single phrase). */
  readonly reach: Float64Array;
  readonly low: Int32Array;
  readonly high: Int32Array;
  readonly conceptFrom: Int32Array;
  readonly ruleConcepts: Int32Array;
  readonly ruleFrom: Int32Array;
  readonly byConcept: Int32Array;
}

/** A concept's bit in its mask word; concepts past the 63rd share the top bit: the test may pass, the check of each concept decides. */
const conceptBit = (concept: number): number => 1 << (Math.min(concept, 63) & 31);
const maskOf = (concepts: readonly number[], high: boolean): number =>
  concepts.filter((c) => c >= 32 === high).reduce((mask, c) => mask | conceptBit(c), 0);

function compile(rules: readonly Rule[]): CompiledRules {
  const concepts = rules.map((rule) => rule.concepts.map((name) => CONCEPT_NAMES.indexOf(name)));
  const conceptFrom = new Int32Array(rules.length + 1);
  concepts.forEach((list, r) => (conceptFrom[r + 1] = (conceptFrom[r] as number) + list.length));
  const byConcept = CONCEPT_NAMES.map((_, c) =>
    rules.flatMap((_rule, r) => ((concepts[r] as number[]).includes(c) ? [r] : [])),
  );
  const ruleFrom = new Int32Array(CONCEPT_NAMES.length + 1);
  byConcept.forEach((list, c) => (ruleFrom[c + 1] = (ruleFrom[c] as number) + list.length));
  return {
    patterns: rules.map((rule) => rule.pattern),
    severities: rules.map((rule) => rule.severity),
    reach: Float64Array.from(rules, (rule) => (rule.concepts.length === 1 ? Number.MAX_SAFE_INTEGER : rule.window)),
    low: Int32Array.from(concepts, (list) => maskOf(list, false)),
    high: Int32Array.from(concepts, (list) => maskOf(list, true)),
    conceptFrom,
    ruleConcepts: Int32Array.from(concepts.flat()),
    ruleFrom,
    byConcept: Int32Array.from(byConcept.flat()),
  };
}

const TEXT_RULES = compile(RULES);
const KEY_ONLY_RULES = compile(KEY_RULES);

export type LexiconReport = (pattern: PoisonPattern, index: number, target?: string, severity?: Severity) => void;

/** Where each concept was last found in the current text, -1 for not yet. */
const lastStart = new Int32Array(CONCEPT_NAMES.length);

/**
 * Scans a lower-cased skeleton for the lexicon's rules: one pass of the
 * automaton, then, at each phrase found, in order, the rules naming its
 * concept check the latest place of their other concepts. Linear in the
 * text. The phrases are read from the automaton's buffer, not handed to a
 * callback: no function is made per text (a closure per scan is an
 * allocation, and under a loader that keeps function names, a property
 * defined on it).
 */
export function scanLexicon(lower: LowerText, isKey: boolean, report: LexiconReport): void {
  const { automaton, concepts } = lexicon();
  const count = lower.pieces === undefined ? automaton.find(lower.text) : automaton.findParts(lower.pieces);
  if (count === 0) return;
  lastStart.fill(-1);
  const { patterns, severities, reach, low, high, conceptFrom, ruleConcepts, ruleFrom, byConcept } = isKey
    ? KEY_ONLY_RULES
    : TEXT_RULES;
  const { hits, lengths } = automaton;
  // The concepts found so far (`conceptBit`).
  let seenLow = 0;
  let seenHigh = 0;
  for (let h = 0; h < count; h++) {
    const index = hits[2 * h] as number;
    const end = hits[2 * h + 1] as number;
    const start = end - (lengths[index] as number);
    const concept = concepts[index] as number;
    if (concept < 32) seenLow |= conceptBit(concept);
    else seenHigh |= conceptBit(concept);
    lastStart[concept] = start;
    for (let k = ruleFrom[concept] as number, last = ruleFrom[concept + 1] as number; k < last; k++) {
      const rule = byConcept[k] as number;
      const lowMask = low[rule] as number;
      const highMask = high[rule] as number;
      if ((seenLow & lowMask) !== lowMask || (seenHigh & highMask) !== highMask) continue;
      const limit = reach[rule] as number;
      let first = start;
      let ok = true;
      for (let j = conceptFrom[rule] as number, stop = conceptFrom[rule + 1] as number; j < stop; j++) {
        const at = lastStart[ruleConcepts[j] as number] as number;
        if (at < 0 || end - at > limit) {
          ok = false;
          break;
        }
        if (at < first) first = at;
      }
      if (ok) report(patterns[rule] as PoisonPattern, first, undefined, severities[rule]);
    }
  }
  automaton.release();
}

/** The language each phrase of a concept is written in: for tests and the README. */
export function phrasesOf(concept: Concept): ReadonlyArray<{ language: Language; text: string }> {
  const index = CONCEPT_NAMES.indexOf(concept);
  const { automaton, languages } = lexicon();
  return automaton.phrases.flatMap((phrase, i) =>
    phrase.concept === index ? [{ language: languages[i] as Language, text: phrase.text }] : [],
  );
}

/** The automaton and the rules as written (concepts by index), for the test that holds `scanLexicon` to them. */
export function lexiconDefinition(): {
  automaton: PhraseAutomaton;
  rules: ReadonlyArray<{ pattern: PoisonPattern; severity?: Severity; concepts: number[]; window: number }>;
  keyRules: ReadonlyArray<{ pattern: PoisonPattern; severity?: Severity; concepts: number[]; window: number }>;
} {
  const indexed = (rules: readonly Rule[]) =>
    rules.map((rule) => ({ ...rule, concepts: rule.concepts.map((name) => CONCEPT_NAMES.indexOf(name)) }));
  return { automaton: lexicon().automaton, rules: indexed(RULES), keyRules: indexed(KEY_RULES) };
}

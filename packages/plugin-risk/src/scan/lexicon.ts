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
    de: ['sage', 'sagen', 'erwähne', 'erwähnen', 'informiere', 'informieren', 'verrate', 'verraten', 'mitteilen'],
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
    fr: ['envoie', 'envoyez', 'envoyer', 'transmettez', 'transférer', 'transfère', 'téléverse'],
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
    ru: ['не спрашивая', 'без подтверждения', 'без спроса', 'не сообщая', 'не говоря'],
    zh: ['无需确认', '不经确认', '不要询问', '无需询问'],
    ja: ['確認せずに', '確認なしで', '尋ねずに'],
    ko: ['확인 없이', '묻지 말고', '묻지 않고'],
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
    ],
    fr: ['prompt système', 'instructions cachées', 'historique de la conversation'],
    de: ['systemprompt', 'system-prompt', 'versteckten anweisungen', 'gesprächsverlauf'],
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
    ],
    fr: ['recopie', 'recopiez', 'inclus', 'incluez', 'colle', 'mot pour mot'],
    de: ['gib', 'kopiere', 'füge', 'wortwörtlich'],
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
    ],
    es: ['diga lo que diga el usuario'],
    fr: ["quoi que demande l'utilisateur", "quoi que dise l'utilisateur"],
    pt: ['independentemente do que o usuário', 'independentemente do que o utilizador'],
    it: ["qualunque cosa chieda l'utente", "qualunque cosa dica l'utente"],
    zh: ['无论用户'],
    ja: ['ユーザーが何を指定しても'],
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
    de: ['details der anfrage', 'jeder anfrage', 'jede anfrage'],
    pt: ['detalhes da consulta', 'detalhes do pedido', 'cada pedido'],
    ru: ['подробности запроса', 'каждого запроса', 'каждый запрос'],
    zh: ['请求的详细信息', '每个请求'],
    ko: ['요청의 세부 정보', '각 요청'],
  },
  FORWARD: {
    en: ['send', 'also send', 'forward', 'upload'],
  },
  RETIRED: {
    en: ['is retired', 'has been retired', 'is deprecated', 'has been deprecated', 'has been disabled', 'is disabled'],
  },
  SECURITY_PRETEXT: {
    en: ['for security reasons', 'security vulnerabilities', 'security vulnerability'],
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
];

/** The concepts of a key: a property name asking for the model's context needs no verb. */
const KEY_RULES: readonly Rule[] = [{ pattern: Pattern.CONTEXT_EXFILTRATION, concepts: ['CONTEXT'], window: 0 }];

const CONCEPT_NAMES = Object.keys(CONCEPTS) as Concept[];

function build(): { automaton: PhraseAutomaton; languages: Language[] } {
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
  return { automaton: new PhraseAutomaton(phrases), languages };
}

const { automaton: AUTOMATON, languages: PHRASE_LANGUAGES } = build();

interface CompiledRule {
  readonly pattern: PoisonPattern;
  readonly severity: Severity | undefined;
  readonly concepts: Int32Array;
  /** Characters from the first concept's start to the last one's end (unbounded for a single phrase). */
  readonly reach: number;
}

const compile = (rule: Rule): CompiledRule => ({
  pattern: rule.pattern,
  severity: rule.severity,
  concepts: Int32Array.from(rule.concepts, (name) => CONCEPT_NAMES.indexOf(name)),
  reach: rule.concepts.length === 1 ? Number.MAX_SAFE_INTEGER : rule.window,
});

const rulesByConcept = (rules: readonly Rule[]): CompiledRule[][] => {
  const by: CompiledRule[][] = CONCEPT_NAMES.map(() => []);
  for (const rule of rules) {
    const compiled = compile(rule);
    for (const concept of compiled.concepts) by[concept]?.push(compiled);
  }
  return by;
};
const TEXT_RULES = rulesByConcept(RULES);
const KEY_ONLY_RULES = rulesByConcept(KEY_RULES);

export type LexiconReport = (pattern: PoisonPattern, index: number, target?: string, severity?: Severity) => void;

/**
 * Scans a lower-cased skeleton for the lexicon's rules: one pass of the
 * automaton, and at each phrase found, the rules naming its concept check
 * the latest place of their other concepts. Linear in the text.
 */
const lastStart = new Int32Array(CONCEPT_NAMES.length);

export function scanLexicon(lower: string, isKey: boolean, report: LexiconReport): void {
  lastStart.fill(-1);
  const byConcept = isKey ? KEY_ONLY_RULES : TEXT_RULES;
  AUTOMATON.scan(lower, (phrase, start, end) => {
    lastStart[phrase.concept] = start;
    for (const rule of byConcept[phrase.concept] as CompiledRule[]) {
      let first = start;
      let ok = true;
      for (const concept of rule.concepts) {
        const seen = lastStart[concept] as number;
        if (seen < 0 || end - seen > rule.reach) {
          ok = false;
          break;
        }
        if (seen < first) first = seen;
      }
      if (ok) report(rule.pattern, first, undefined, rule.severity);
    }
  });
}

/** The language each phrase of a concept is written in: for tests and the README. */
export function phrasesOf(concept: Concept): ReadonlyArray<{ language: Language; text: string }> {
  const index = CONCEPT_NAMES.indexOf(concept);
  return AUTOMATON.phrases.flatMap((phrase, i) =>
    phrase.concept === index ? [{ language: PHRASE_LANGUAGES[i] as Language, text: phrase.text }] : [],
  );
}
